/**
 * The gateway as production runs it (its own Bun process, `gateway/src/main.ts`, production's runtime settings),
 * against callers that would make it hold what they send: a pipelined flood nobody reads the answers of, and
 * refused uploads. Its memory is read from outside (VmRSS of /proc/<pid>/status), so a buffer that grows with what
 * a caller sends shows, whatever holds it. The database, Redis and the two services are the test's stack.
 */
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { RUNTIME_ENV } from '@studio/shared';
import { freePorts } from '../../scripts/lib/ports';
import { makeRoomForAGateway, type Stack, startStack } from '../../test/harness';
import { RawConnection, rawRequest } from './raw-http';

const root = join(import.meta.dir, '../..');
const MIB = 1024 * 1024;

let s: Stack;
let publishable: string;
beforeAll(async () => {
  s = await startStack();
  await makeRoomForAGateway(s); // its processes are the gateways here
  const st = await s.studio();
  publishable = (await s.key(st.id, 'publishable')).key;
});
afterAll(() => s.close());

interface Spawned {
  proc: ReturnType<typeof Bun.spawn>;
  storefrontPort: number;
  managementPort: number;
  opsUrl: string;
  stderr: () => string;
}

/** Every gateway process a test started, killed after it whatever happened. */
const started: Spawned[] = [];
afterEach(async () => {
  for (const g of started.splice(0)) {
    if (g.proc.exitCode !== null || g.proc.signalCode !== null) continue;
    g.proc.kill('SIGKILL');
    await g.proc.exited;
  }
});

/** The process's resident memory in bytes (VmRSS); 0 once it is gone. */
function rssOf(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples a process's VmRSS every 100 ms until stopped; `max` is the highest seen. */
function watchRss(pid: number) {
  const w = { max: rssOf(pid), last: 0 };
  const timer = setInterval(() => {
    w.last = rssOf(pid);
    w.max = Math.max(w.max, w.last);
  }, 100);
  return { w, stop: () => clearInterval(timer) };
}

/**
 * A gateway process against the stack's database, Redis and services, on free ports of its own, ready; its limits
 * lifted (one test client is one address: a flood measures serving, not 429s), its log at warnings.
 */
async function spawnGateway(): Promise<Spawned> {
  const [sf, mg, dash, ops] = (await freePorts(4)) as [number, number, number, number];
  const fromStack: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.config))
    if (v !== '' && v !== undefined && v !== null) fromStack[k] = String(v);
  const at = (port: number) => `http://127.0.0.1:${port}`;
  const env = {
    ...(process.env as Record<string, string>),
    ...RUNTIME_ENV,
    ...fromStack,
    HOST: '127.0.0.1',
    STOREFRONT_PORT: String(sf),
    MANAGEMENT_PORT: String(mg),
    DASHBOARD_PORT: String(dash),
    OPS_PORT: String(ops),
    STOREFRONT_PUBLIC_URL: at(sf),
    MANAGEMENT_PUBLIC_URL: at(mg),
    DASHBOARD_PUBLIC_URL: at(dash),
    RATE_LIMIT_PUBLISHABLE_CLIENT: '1000000:1000000',
    RATE_LIMIT_PUBLISHABLE: '1000000:1000000',
    RATE_LIMIT_SECRET: '1000000:1000000',
    RATE_LIMIT_UNKNOWN_KEY: '1000000:1000000',
    LOG_LEVEL: 'warn',
  };
  const proc = Bun.spawn(['bun', join(root, 'gateway/src/main.ts')], {
    cwd: root,
    env,
    stdout: 'ignore',
    stderr: 'pipe',
  });
  let err = '';
  void (async () => {
    const decoder = new TextDecoder();
    const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read())
      if (err.length < 100_000) err += decoder.decode(r.value);
  })();
  const g: Spawned = { proc, storefrontPort: sf, managementPort: mg, opsUrl: at(ops), stderr: () => err };
  started.push(g);
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) break;
    const ok = await fetch(`${at(sf)}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return g;
    await Bun.sleep(50);
  }
  throw new Error(`the gateway did not become ready (exit ${proc.exitCode}): ${err}`);
}

/** `/healthz` on the ops port: its time in ms, or why it failed (not answered 200 within 1 s). */
async function healthz(opsUrl: string): Promise<number | string> {
  const t0 = performance.now();
  try {
    const r = await fetch(`${opsUrl}/healthz`, { signal: AbortSignal.timeout(1_000) });
    await r.arrayBuffer();
    return r.status === 200 ? performance.now() - t0 : `status ${r.status}`;
  } catch (e) {
    return `${(e as Error).name} after ${Math.round(performance.now() - t0)} ms`;
  }
}

/** Opens a client socket that never reads: what the server sends piles up in the kernel's buffers, then in its own. */
function deafSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, noDelay: true });
    socket.pause();
    socket.on('error', () => {});
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Writes `batch` on `socket` again and again, as fast as it takes it, until `until`; returns the bytes it took. */
async function pump(socket: Socket, batch: Buffer, until: number): Promise<number> {
  let sent = 0;
  while (Date.now() < until && !socket.destroyed) {
    const more = socket.write(batch);
    sent += batch.byteLength;
    if (more) {
      await new Promise((r) => setImmediate(r));
      continue;
    }
    // the socket's buffer is full: wait until it drains (the server read) or the time is up
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, Math.max(1, until - Date.now()));
      function done() {
        clearTimeout(t);
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      }
      socket.once('drain', done);
      socket.once('close', done);
    });
  }
  return sent;
}

/**
 * Without Redis every cached read is answered at once, from memory. Bun.serve hands the handler every request of what
 * it read from a connection in one turn of the event loop, so 50 pipelining connections held that turn for seconds:
 * no timer ran, /healthz timed out, the activity log could not flush, and 200,000 entries waiting as objects (and
 * every stale read's refresh holding its request) grew the gateway by 340-390 MiB. A turn now answers for
 * LONG_TURN_MS at most, the rest on the next turn, and Bun.serve closes a connection that pipelines behind such an
 * answer (oven-sh/bun#38128), as it does in Redis mode behind a new visitor's first call: a few thousand answers in
 * all, either way (docs/design/serving.md, "Known limits").
 */
test('50 connections piping Storefront GETs, never reading an answer, for 6 s: the gateway grows by at most 128 MiB, /healthz answers within 1 s throughout, SIGINT stops it', async () => {
  const g = await spawnGateway();
  const pid = g.proc.pid;
  const get = rawRequest('GET', '/v1/plans', { authorization: `Bearer ${publishable}` });
  // warm: the cache holds the answer, the code paths are compiled, the pools are open
  const warm = await RawConnection.open(g.storefrontPort);
  // one alone first: its key is looked up in Postgres (an answer a turn of the event loop later), and Bun.serve
  // closes a connection that pipelines a request behind an answer not made yet (oven-sh/bun#38128)
  await warm.write(get);
  await warm.read(1, 5_000);
  for (let i = 0; i < 20; i++) {
    await warm.write(get.repeat(10));
    await warm.read(1 + (i + 1) * 10, 5_000);
  }
  expect(warm.answers().map((a) => a.status)).toEqual(Array(201).fill(200));
  warm.close();
  await Bun.sleep(300);
  const baseline = rssOf(pid);
  const rss = watchRss(pid);
  const sockets = await Promise.all(Array.from({ length: 50 }, () => deafSocket(g.storefrontPort)));
  const batch = Buffer.from(get.repeat(100), 'latin1');
  const until = Date.now() + 6_000;
  const health: (number | string)[] = [];
  const probing = (async () => {
    while (Date.now() < until) {
      health.push(await healthz(g.opsUrl));
      await Bun.sleep(400);
    }
  })();
  const sent = await Promise.all(sockets.map((socket) => pump(socket, batch, until)));
  await probing;
  health.push(await healthz(g.opsUrl)); // the clients still there, never read
  await Bun.sleep(500);
  rss.stop();
  const grown = Math.max(rss.w.max, rssOf(pid)) - baseline;
  const report = `baseline ${(baseline / MIB).toFixed(0)} MiB, grown ${(grown / MIB).toFixed(0)} MiB, ${(sent.reduce((a, b) => a + b, 0) / MIB).toFixed(0)} MiB of requests sent; healthz ms: ${health.map((h) => (typeof h === 'number' ? Math.round(h) : h)).join(' ')}`;
  console.log(`pipelined flood: ${report}`);
  for (const socket of sockets) socket.destroy();
  await Bun.sleep(300);
  const t0 = Date.now();
  g.proc.kill('SIGINT');
  const code = await Promise.race([g.proc.exited, Bun.sleep(15_000).then(() => 'still running' as const)]);
  const stopped = `${code} after ${Date.now() - t0} ms`;
  expect(
    {
      healthzFailures: health.filter((h) => typeof h !== 'number'),
      withinLimit: grown <= 128 * MIB,
      exit: code,
    },
    `${report}; SIGINT: ${stopped}; stderr: ${g.stderr().slice(-2000)}`,
  ).toEqual({ healthzFailures: [], withinLimit: true, exit: 0 });
}, 60_000);

test('400 unauthenticated 1 MiB uploads to the Management port at once: each refused with a problem (never a hang), the gateway grows by far less than their bytes', async () => {
  const g = await spawnGateway();
  const pid = g.proc.pid;
  const body = Buffer.alloc(MIB, 'a');
  const head = Buffer.from(
    rawRequest('POST', '/v1/instructors', {
      'content-type': 'application/json',
      'idempotency-key': crypto.randomUUID(),
      'content-length': String(body.byteLength),
    }),
    'latin1',
  );
  // warm: a few refused small writes
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`http://127.0.0.1:${g.managementPort}/v1/instructors`, { method: 'POST', body: '{}' });
    expect(r.status).toBe(401);
    await r.arrayBuffer();
  }
  await Bun.sleep(300);
  const baseline = rssOf(pid);
  const rss = watchRss(pid);
  const outcomes = await Promise.all(
    Array.from({ length: 400 }, async () => {
      const c = await RawConnection.open(g.managementPort);
      try {
        void c.write(head);
        void c.write(body);
        const [a] = await c.read(1, 30_000);
        if (!a) return `no answer (closed: ${c.closed}; heard ${JSON.stringify(c.text.slice(0, 120))})`;
        return a.status === 401 && a.headers['content-type']?.startsWith('application/problem+json')
          ? 'problem 401'
          : `${a.status} ${a.headers['content-type']} ${a.body.slice(0, 120)}`;
      } finally {
        c.close();
      }
    }),
  );
  await Bun.sleep(500);
  rss.stop();
  const grown = Math.max(rss.w.max, rssOf(pid)) - baseline;
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  const report = `baseline ${(baseline / MIB).toFixed(0)} MiB, grown ${(grown / MIB).toFixed(0)} MiB; answers: ${JSON.stringify(counts)}`;
  console.log(`refused uploads: ${report}`);
  expect({ answers: counts, withinLimit: grown <= 150 * MIB }, `${report}; stderr: ${g.stderr().slice(-2000)}`).toEqual(
    {
      answers: { 'problem 401': 400 },
      withinLimit: true,
    },
  );
}, 60_000);
