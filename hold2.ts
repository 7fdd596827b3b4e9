import net from 'node:net';
const { api, ops } = JSON.parse(process.argv[2]!);
const socks: net.Socket[] = []; let closed = 0;
for (let i = 0; i < 300; i++) { const s = net.connect(api, '127.0.0.1'); s.on('error', () => {}); s.on('close', () => closed++); socks.push(s); await Bun.sleep(2); }
await Bun.sleep(1000);
for (const port of [ops, api]) { const t0 = performance.now(); try { const r = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) }); console.log(port === ops ? 'ops' : 'api', r.status, Math.round(performance.now() - t0), 'ms'); } catch (e) { console.log(port === ops ? 'ops' : 'api', 'failed', String(e)); } }
console.log('closed by server', closed); for (const s of socks) s.destroy(); await Bun.sleep(300);
const t0 = performance.now(); const r = await fetch(`http://127.0.0.1:${ops}/`); console.log('ops after release', r.status, Math.round(performance.now() - t0), 'ms');
process.exit(0);
