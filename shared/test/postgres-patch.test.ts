/**
 * What patches/postgres@3.4.9.patch changes in postgres.js, held here over a real Postgres: a connection ended while
 * postgres.js asks for the array types (the first statement of each new connection) fails the statement waiting on
 * it, and leaves no promise rejected with no one to hear it (which ends a Bun process, or fails the test running).
 */
import { afterAll, expect, test } from 'bun:test';
import postgres from 'postgres';

const target = new URL(process.env.TEST_DATABASE_URL!);
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
afterAll(() => void process.off('unhandledRejection', onUnhandled));

/** A TCP relay to Postgres that holds back the client's question for the array types: it never gets an answer. */
function relayHoldingTypeQuery() {
  const held = Promise.withResolvers<void>();
  type Side = { peer?: Bun.Socket<Side>; pending: Uint8Array[] };
  const server = Bun.listen<Side>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      async open(client) {
        client.data = { pending: [] };
        const upstream = await Bun.connect<Side>({
          hostname: target.hostname,
          port: Number(target.port || 5432),
          data: { peer: client, pending: [] },
          socket: {
            data: (s, chunk) => void s.data.peer?.write(chunk),
            close: (s) => void s.data.peer?.end(),
          },
        });
        client.data.peer = upstream;
        for (const chunk of client.data.pending.splice(0)) upstream.write(chunk);
      },
      data(client, chunk) {
        if (Buffer.from(chunk).includes('typcategory')) return held.resolve();
        if (client.data.peer) client.data.peer.write(chunk);
        else client.data.pending.push(Uint8Array.from(chunk));
      },
      close: (client) => void client.data.peer?.end(),
    },
  });
  return { port: server.port, held: held.promise, stop: () => server.stop(true) };
}

test('a connection ended while postgres.js fetches the array types fails the waiting query, and rejects nothing unheard', async () => {
  const relay = relayHoldingTypeQuery();
  const url = Object.assign(new URL(target.href), { hostname: '127.0.0.1', port: String(relay.port) });
  const sql = postgres(url.href, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    const outcome = sql`select 1`.then(
      () => 'answered',
      (err: { code?: string }) => err.code ?? String(err),
    );
    await relay.held;
    await sql.end({ timeout: 0 });
    expect(await outcome).toBe('CONNECTION_DESTROYED');
    await Bun.sleep(50); // an unheard rejection is reported once the microtasks have run
    expect(unhandled).toEqual([]);
  } finally {
    relay.stop();
  }
});
