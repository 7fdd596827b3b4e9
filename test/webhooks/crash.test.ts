/**
 * The dispatcher survives what production does to it (docs/design/webhooks.md): SIGKILLed mid-delivery, the
 * delivery arrives once another runs (after the lease); a Postgres outage of a few seconds delays
 * deliveries and loses none; a management-service process runs it and drains it on SIGTERM. The
 * killed dispatchers run in processes of their own, with HTTP(S)_PROXY pointing at a trap that no
 * delivery may reach.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { lookup } from 'node:dns/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEndpoint, webhookContext } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { loadConfig } from '@studio/shared';
import { createSql } from '@studio/shared/io';
import { Webhook } from 'standardwebhooks';
import { migrate } from '../../scripts/lib/migrate';
import { freePort } from '../../scripts/lib/ports';
import { createStudio } from '../../scripts/lib/studios';
import { startThrowawayPostgres } from '../../scripts/lib/throwaway-pg';
import { needs } from '../needs';
import { freshDatabase, recordEvent, startReceiver, type TestDatabase, until } from './helpers';

const root = join(import.meta.dir, '../..');
let db: TestDatabase;
let trapHits = 0;
const trap = Bun.listen({
  hostname: '127.0.0.1',
  port: 0,
  socket: {
    open() {
      trapHits++;
    },
    data(s) {
      s.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
    },
  },
});
beforeAll(async () => {
  db = await freshDatabase({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
});
afterAll(async () => {
  trap.stop(true);
  await db.close();
});

function spawnDispatcher(env: Record<string, string>) {
  const proxy = `http://127.0.0.1:${trap.port}`;
  return Bun.spawn(['bun', join(root, 'test/webhooks/dispatcher-child.ts')], {
    cwd: root,
    env: {
      ...(process.env as Record<string, string>),
      DATABASE_URL: db.url,
      REDIS_URL: 'none',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'warn',
      HTTP_PROXY: proxy,
      HTTPS_PROXY: proxy,
      http_proxy: proxy,
      https_proxy: proxy,
      NO_PROXY: '',
      no_proxy: '',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'inherit',
  });
}

test('a dispatcher SIGKILLed mid-delivery loses nothing: another delivers it after the lease, same webhook-id', async () => {
  const { id: studioId } = await db.studio();
  const r = startReceiver(['hang']);
  try {
    const { endpoint, secret } = await createEndpoint(webhookContext(db.sql, db.config), { studioId, url: r.url });
    const first = spawnDispatcher({ TEST_TIMEOUT_MS: '8000', TEST_LEASE_MS: '1500' });
    const eventId = await recordEvent(db.sql, studioId);
    await until(() => r.of(eventId).length === 1, 10_000, 'the first attempt, left hanging');
    first.kill('SIGKILL');
    await first.exited;
    const [inFlight] = await db.sql<
      { lease: string | null; status: string; attempts: number }[]
    >`select lease, status, attempts from webhook_deliveries where event_id = ${eventId}`;
    expect(inFlight).toMatchObject({ status: 'pending', attempts: 0 });
    expect(inFlight!.lease).not.toBeNull(); // the killed one's claim, until its lease ends

    const second = spawnDispatcher({ TEST_TIMEOUT_MS: '8000', TEST_LEASE_MS: '1500' });
    try {
      await until(() => r.of(eventId).length === 2, 10_000, 'the attempt redone by another dispatcher');
      const redone = r.of(eventId)[1]!;
      expect(() => new Webhook(secret).verify(redone.body, redone.headers)).not.toThrow();
      expect(redone.body).toBe(r.of(eventId)[0]!.body);
      await until(
        async () =>
          (await db.sql`select 1 from webhook_deliveries where event_id = ${eventId} and status = 'succeeded'`)
            .length === 1,
        5_000,
        'recorded',
      );
      const attempts =
        await db.sql`select status_code from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${endpoint.id}`;
      expect(attempts.map((a) => a.statusCode)).toEqual([200]);
      expect(trapHits).toBe(0); // HTTP(S)_PROXY in its environment, and no delivery went through it
    } finally {
      second.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  } finally {
    r.stop();
  }
}, 40_000);

// a certificate made here (openssl), trusted by the child through NODE_EXTRA_CA_CERTS; localhost must resolve to 127.0.0.1 first
const tlsUsable =
  Bun.which('openssl') !== null &&
  (await lookup('localhost', { all: true, verbatim: true }).then(
    (a) => a[0]?.address === '127.0.0.1',
    () => false,
  ));
test.skipIf(!tlsUsable)(
  "https: the connection goes to the checked address, with the URL's host as TLS server name: its certificate is verified against it",
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'studio-webhook-tls-'));
    const cert = async (name: string) => {
      await Bun.$`openssl req -x509 -newkey rsa:2048 -nodes -keyout ${dir}/${name}.key -out ${dir}/${name}.pem -days 1 -subj /CN=${name} -addext subjectAltName=DNS:${name}`.quiet();
      return { cert: await Bun.file(`${dir}/${name}.pem`).text(), key: await Bun.file(`${dir}/${name}.key`).text() };
    };
    const [good, wrong] = [await cert('localhost'), await cert('other.example')];
    await Bun.write(`${dir}/ca.pem`, good.cert + wrong.cert);
    const got: Record<string, string>[] = [];
    const serve = (tls: { cert: string; key: string }) =>
      Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        tls,
        fetch: (req) => (got.push(req.headers.toJSON()), new Response('ok')),
      });
    const [right, mismatched] = [serve(good), serve(wrong)];
    const { id: studioId } = await db.studio();
    const ctx = webhookContext(db.sql, db.config);
    const ok = await createEndpoint(ctx, { studioId, url: `https://localhost:${right.port}/hooks` });
    const bad = await createEndpoint(ctx, { studioId, url: `https://localhost:${mismatched.port}/hooks` });
    const child = spawnDispatcher({ NODE_EXTRA_CA_CERTS: `${dir}/ca.pem`, TEST_TIMEOUT_MS: '3000' });
    try {
      const eventId = await recordEvent(db.sql, studioId);
      const statusOf = async (endpointId: string) =>
        (
          await db.sql<{ statusCode: number | null; error: string | null }[]>`
        select a.status_code, a.error from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
        where d.endpoint_id = ${endpointId} and d.event_id = ${eventId} order by a.seq limit 1`
        )[0];
      await until(
        async () => (await statusOf(ok.endpoint.id)) !== undefined && (await statusOf(bad.endpoint.id)) !== undefined,
        10_000,
        'both attempts',
      );
      expect(await statusOf(ok.endpoint.id)).toEqual({ statusCode: 200, error: null });
      expect((await statusOf(bad.endpoint.id))!.error).toMatch(/CERT|altname|certificate/i);
      expect(got).toHaveLength(1);
      expect(got[0]!.host).toBe(`localhost:${right.port}`);
      expect(got[0]!['webhook-id']).toBe(eventId);
    } finally {
      child.kill('SIGTERM');
      await child.exited;
      right.stop(true);
      mismatched.stop(true);
      await rm(dir, { recursive: true, force: true });
    }
  },
  30_000,
);

needs('pg-binaries').test(
  'a Postgres outage of a few seconds delays deliveries and loses none',
  async () => {
    const pg = await startThrowawayPostgres();
    const url = pg.url.replace(/\/postgres$/, '/studio');
    const r = startReceiver([], { status: 200, delayMs: 50 });
    try {
      await migrate(url);
      const config = loadConfig({ DATABASE_URL: url, REDIS_URL: 'none', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
      const sql = createSql(url, { max: 10 });
      const studioId = (await createStudio(sql, { name: 'Outage Studio' })).studio.id as string;
      await createEndpoint(webhookContext(sql, config), { studioId, url: r.url });
      // a slow poll: what arrives fast after the outage came by LISTEN, which must have been made again
      const dispatcher = createDispatcher({
        sql,
        config,
        timeoutMs: 2_000,
        leaseMs: 3_000,
        pollMs: 5_000,
        maxInFlight: 4,
        retryScheduleMs: [200, 200, 200, 200, 200],
      });
      dispatcher.start();
      try {
        const ids: string[] = [];
        for (let i = 0; i < 30; i++) ids.push(await recordEvent(sql, studioId));
        await until(() => r.received.length >= 5, 10_000, 'deliveries under way');
        await pg.stop();
        const stoppedAt = Date.now();
        const duringOutage = r.received.length;
        await Bun.sleep(3_000);
        await pg.start();
        for (let i = 0; i < 10; i++) ids.push(await recordEvent(sql, studioId));
        await until(() => ids.every((id) => r.of(id).length >= 1), 30_000, 'every event delivered');
        expect(duringOutage).toBeLessThan(40); // the outage came while there was work left
        await until(
          async () => (await sql`select 1 from webhook_deliveries where status <> 'succeeded'`).length === 0,
          15_000,
          'every delivery recorded as succeeded',
        );
        const last = Math.max(...r.received.map((x) => x.at));
        expect(last).toBeGreaterThan(stoppedAt + 3_000); // delayed, not lost
        const [{ n }] = (await sql`select count(*)::int as n from webhook_deliveries`) as unknown as [{ n: number }];
        expect(n).toBe(40);
        const sent = Date.now();
        const woken = await recordEvent(sql, studioId);
        await until(() => r.of(woken).length === 1, 5_000, 'an event after the outage');
        expect(r.of(woken)[0]!.at - sent).toBeLessThan(2_500);
      } finally {
        await dispatcher.stop();
        await sql.end({ timeout: 2 });
      }
    } finally {
      r.stop();
      await pg.destroy();
    }
  },
  90_000,
);

test('management-service runs the dispatcher and drains it on SIGTERM: an attempt in flight is finished and recorded', async () => {
  const { id: studioId } = await db.studio();
  const r = startReceiver([{ status: 200, delayMs: 1_500 }]);
  const port = await freePort();
  const proc = Bun.spawn(['bun', join(root, 'management-service/src/main.ts')], {
    cwd: root,
    env: {
      ...(process.env as Record<string, string>),
      DATABASE_URL: db.url,
      REDIS_URL: 'none',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      MANAGEMENT_SERVICE_PORT: String(port),
      LOG_LEVEL: 'warn',
    },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  try {
    await createEndpoint(webhookContext(db.sql, db.config), { studioId, url: r.url });
    await until(
      () =>
        fetch(`http://127.0.0.1:${port}/readyz`).then(
          (x) => x.ok,
          () => false,
        ),
      10_000,
      'management-service ready',
    );
    const eventId = await recordEvent(db.sql, studioId);
    await until(() => r.of(eventId).length === 1, 10_000, 'the delivery, under way');
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/\nstudio_webhook_pending \d+\n/);
    expect(metrics).toMatch(/\nstudio_webhook_oldest_pending_seconds [\d.e+-]+\n/);
    expect(metrics).toContain('# TYPE studio_webhook_deliveries_total counter');
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    const [row] = await db.sql<
      { status: string; attempts: number }[]
    >`select status, attempts from webhook_deliveries where event_id = ${eventId}`;
    expect(row).toEqual({ status: 'succeeded', attempts: 1 });
  } finally {
    proc.kill('SIGKILL');
    r.stop();
  }
}, 40_000);
