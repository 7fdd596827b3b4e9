import net from 'node:net';
const { api } = JSON.parse(process.argv[2]!);
const socks: net.Socket[] = []; let closed = 0;
for (let i = 0; i < 200; i++) { const s = net.connect(api, '127.0.0.1'); s.on('error', () => {}); s.on('close', () => closed++); socks.push(s); }
await Bun.sleep(3000); console.log('closed by server', closed); process.exit(0);
