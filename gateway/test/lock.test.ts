/**
 * The gateway lock's session (docs/design/single-node.md): a session that goes silent, as a network that partitions
 * or a database host that reboots leaves it, is taken as lost within seconds, not after TCP keepalive's minutes; a
 * Postgres that comes back after an outage has the lock taken again within half a second.
 */
import { expect, test } from 'bun:test';
import postgres from 'postgres';
import { startThrowawayPostgres } from '../../scripts/lib/throwaway-pg';
import { needs } from '../../test/needs';
import { GatewayLock } from '../src/lock';

type Side = { peer?: Bun.Socket<unknown>; queue: Uint8Array[] };

/** A TCP relay to Postgres that can go silent: bytes dropped both ways, nothing closed. */
function relay(target: URL) {
  let silent = false;
  const server = Bun.listen<Side>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        client.data = { queue: [] };
        void Bun.connect<unknown>({
          hostname: target.hostname,
          port: Number(target.port || 5432),
          socket: {
            data: (_upstream, chunk) => void (silent || client.write(chunk)),
            close: () => void client.end(),
          },
        }).then((upstream) => {
          client.data.peer = upstream;
          for (const bytes of client.data.queue.splice(0)) upstream.write(bytes);
        });
      },
      data(client, chunk) {
        if (silent) return;
        if (client.data.peer) client.data.peer.write(chunk);
        else client.data.queue.push(new Uint8Array(chunk));
      },
      close: (client) => void client.data.peer?.end(),
    },
  });
  const url = new URL(target.href);
  url.hostname = '127.0.0.1';
  url.port = String(server.port);
  return { url: url.href, silence: () => (silent = true), stop: () => server.stop(true) };
}

test('a lock session that goes silent is taken as lost within its ping, and the gateway stops trusting it', async () => {
  const r = relay(new URL(process.env.TEST_DATABASE_URL!));
  let lost = 0;
  // shared, as a Redis-mode gateway holds it: no other gateway of any test is excluded by it
  const lock = new GatewayLock({
    url: r.url,
    mode: 'redis',
    onLost: () => lost++,
    pingMs: { every: 100, within: 300 },
  });
  try {
    await lock.start();
    expect(lock.held).toBe(true);
    await Bun.sleep(300);
    expect(lost).toBe(0); // a session that answers is kept
    r.silence();
    for (const deadline = Date.now() + 3_000; !lost && Date.now() < deadline; ) await Bun.sleep(20);
    expect(lost).toBe(1);
    expect(lock.held).toBe(false);
  } finally {
    await lock.stop();
    r.stop();
  }
});

needs('pg-binaries').test(
  'after a Postgres outage the lock is held again within half a second of Postgres accepting connections',
  async () => {
    // a Postgres of its own, stopped and started again: the machine's is never touched
    const pg = await startThrowawayPostgres();
    let lost = 0;
    const lock = new GatewayLock({
      url: pg.url,
      mode: 'single-node',
      listen: { 'keys:revoked': () => {} },
      onLost: () => lost++,
    });
    try {
      await lock.start();
      expect(lock.held).toBe(true);
      await pg.stop();
      for (const deadline = Date.now() + 3_000; !lost && Date.now() < deadline; ) await Bun.sleep(20);
      expect(lost).toBe(1);
      // long enough for the retries to back off as a real outage makes them (the lock used to come back 3-5 s late)
      await Bun.sleep(6_000);
      const starting = pg.start();
      // the moment Postgres answers a new connection's query, seen as a client sees it
      let accepted = 0;
      while (!accepted) {
        const probe = postgres(pg.url, { max: 1, connect_timeout: 1, onnotice: () => {} });
        await probe
          .unsafe('select 1')
          .then(() => (accepted = performance.now()))
          .catch(() => Bun.sleep(10));
        await probe.end({ timeout: 0 });
      }
      await starting;
      while (!lock.held && performance.now() - accepted < 15_000) await Bun.sleep(10);
      const delay = performance.now() - accepted;
      console.log(`lock held again ${Math.round(delay)} ms after Postgres accepted connections`);
      expect(lock.held).toBe(true);
      expect(delay).toBeLessThan(500);
    } finally {
      await lock.stop();
      await pg.destroy();
    }
  },
  40_000,
);
