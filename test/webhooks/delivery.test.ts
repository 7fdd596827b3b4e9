/**
 * Webhook delivery (docs/design/webhooks.md) through real HTTP, real Postgres and a real receiver: signed per
 * Standard Webhooks (checked with the `standardwebhooks` package), retried with the same webhook-id,
 * 410 and 3 days of failures disable, each attempt delivered once by two dispatchers, one slow
 * receiver never starves another, secrets rolled, a test event, the delivery log and a replay.
 * Events are written as the outbox writes them (helpers.recordEvent).
 */
import { afterAll, afterEach, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  replayDelivery,
  rollEndpointSecret,
  sendTestEvent,
  setEndpointEnabled,
  type WebhookContext,
  webhookContext,
} from '@studio/control';
import { createDispatcher, type DispatcherDeps } from '@studio/management-service/webhooks';
import { newId, setLogLevel } from '@studio/shared';
import { createMetrics, createSql, type Sql } from '@studio/shared/io';
import { Webhook } from 'standardwebhooks';
import {
  catchUpDeferred,
  deleteExpired,
  FAN_OUT_BATCH,
  FAN_OUT_DELIVERIES,
  FAN_OUT_TURN,
  fanOutBatch,
} from '../../management-service/src/webhooks/queries';
import { freePort } from '../../scripts/lib/ports';
import {
  type Answer,
  freshDatabase,
  type Receiver,
  recordEvent,
  startReceiver,
  type TestDatabase,
  until,
} from './helpers';

let s: TestDatabase;
let ctx: WebhookContext;
beforeAll(async () => {
  s = await freshDatabase({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  ctx = webhookContext(s.sql, s.config);
});
afterAll(() => s.close());

// each test's dispatchers, receivers and endpoints go with it, so none works on the next test's deliveries
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
function dispatcher(o: Partial<DispatcherDeps> = {}) {
  const d = createDispatcher({
    sql: s.sql,
    config: s.config,
    timeoutMs: 1_000,
    pollMs: 200,
    retryScheduleMs: [100, 100, 100, 100, 100],
    ...o,
  });
  d.start();
  cleanups.push(() => d.stop());
  return d;
}
function receiver(answers: Answer[] = [], fallback: Answer = 200, port = 0): Receiver {
  const r = startReceiver(answers, fallback, port);
  cleanups.push(() => r.stop());
  return r;
}
async function endpoint(studioId: string, url: string, events?: string[]) {
  const created = await createEndpoint(ctx, { studioId, url, events });
  cleanups.push(() => deleteEndpoint(s.sql, created.endpoint.id).catch(() => {}));
  return created;
}
const deliveryOf = async (endpointId: string, eventId: string) =>
  (
    await s.sql<
      { id: string; status: string; attempts: number }[]
    >`select id, status, attempts from webhook_deliveries where endpoint_id = ${endpointId} and event_id = ${eventId}`
  )[0];

describe('delivery', () => {
  test('POSTs the event JSON, signed per Standard Webhooks: the standardwebhooks package verifies it', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver();
    const { endpoint: ep, secret } = await endpoint(studioId, r.url);
    dispatcher();
    const eventId = await recordEvent(s.sql, studioId, 'instructor.created', {
      id: 'ins_1',
      name: 'Ana Ruiz',
      disciplines: ['pilates'],
    });
    await until(() => r.of(eventId).length === 1, 10_000, 'the delivery');
    const got = r.of(eventId)[0]!;
    const verified = new Webhook(secret).verify(got.body, got.headers) as Record<string, unknown>;
    const [stored] = await s.sql<{ createdAt: Date }[]>`select created_at from events where id = ${eventId}`;
    expect(verified).toEqual({
      id: eventId,
      type: 'instructor.created',
      createdAt: stored!.createdAt.toISOString(),
      data: { object: { id: 'ins_1', name: 'Ana Ruiz', disciplines: ['pilates'] } },
      requestId: 'req_test',
    });
    expect(got.headers['webhook-id']).toBe(eventId);
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(got.headers['content-type']).toBe('application/json');
    // another secret does not verify it
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got.body, got.headers),
    ).toThrow();
    await until(
      async () => (await deliveryOf(ep.id, eventId))?.status === 'succeeded',
      10_000,
      'the delivery recorded',
    );
    const log = await listDeliveries(s.sql, studioId, ep.id);
    expect(log.deliveries).toHaveLength(1);
    expect(log.deliveries[0]).toMatchObject({
      eventId,
      eventType: 'instructor.created',
      status: 'succeeded',
      inFlight: false,
      nextAttemptAt: null,
    });
    expect(log.deliveries[0]!.attempts).toEqual([
      { at: expect.any(String), statusCode: 200, durationMs: expect.any(Number), response: 'answer 200', error: null },
    ]);
  });

  test('retried on a refused connection, a 500 and a timeout until delivered, with the same webhook-id each time', async () => {
    const { id: studioId } = await s.studio();
    const port = await freePort(); // nothing listens there yet: the connection is refused
    const { endpoint: ep, secret } = await endpoint(studioId, `http://127.0.0.1:${port}/hooks`);
    dispatcher({ timeoutMs: 500, retryScheduleMs: [300, 300, 300, 300, 300, 300] });
    const eventId = await recordEvent(s.sql, studioId);
    await until(async () => ((await deliveryOf(ep.id, eventId))?.attempts ?? 0) >= 1, 10_000, 'the refused attempt');
    const r = receiver([500, { status: 200, delayMs: 900 }], 200, port);
    await until(async () => (await deliveryOf(ep.id, eventId))?.status === 'succeeded', 10_000, 'the delivery');
    const attempts = (await listDeliveries(s.sql, studioId, ep.id)).deliveries[0]!.attempts;
    const statuses = attempts.map((a) => a.statusCode);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.slice(-3)).toEqual([500, null, 200]);
    expect(statuses.slice(0, -3).every((x) => x === null)).toBe(true); // refused, once or more
    expect(attempts[0]!.error).toMatch(/refused|ECONNREFUSED|Unable to connect/i);
    expect(attempts[0]!.error).not.toMatch(/(\b[A-Z]{4,}): \1\b/); // the code said once, not "ECONNREFUSED: ECONNREFUSED
    expect(attempts.at(-2)!.error).toBe('no answer within 0.5 s');
    // every request the receiver saw was the same event, signed afresh, the same webhook-id
    expect(r.received.length).toBe(3);
    for (const got of r.received) {
      expect(got.headers['webhook-id']).toBe(eventId);
      expect(() => new Webhook(secret).verify(got.body, got.headers)).not.toThrow();
    }
    expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
  });

  test('a spent schedule fails the delivery; 410 Gone disables the endpoint at once; re-enabled, new events flow and a replay delivers the failed one', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver([500, 500, 500]);
    const { endpoint: ep } = await endpoint(studioId, r.url);
    dispatcher({ retryScheduleMs: [50, 50] });
    const failed = await recordEvent(s.sql, studioId);
    await until(async () => (await deliveryOf(ep.id, failed))?.status === 'failed', 10_000, 'the failed delivery');
    expect((await deliveryOf(ep.id, failed))!.attempts).toBe(3); // the first and two retries
    expect((await getEndpoint(s.sql, ep.id)).enabled).toBe(true);

    r.answer(410);
    const gone = await recordEvent(s.sql, studioId);
    await until(async () => (await deliveryOf(ep.id, gone))?.status === 'failed', 10_000, 'the 410');
    const off = await getEndpoint(s.sql, ep.id);
    expect(off).toMatchObject({ enabled: false, disabledReason: 'The endpoint answered 410 Gone.' });
    expect((await deliveryOf(ep.id, gone))!.attempts).toBe(1);
    const whileOff = await recordEvent(s.sql, studioId);
    await Bun.sleep(400);
    expect(await deliveryOf(ep.id, whileOff)).toBeUndefined();
    await expect(replayDelivery(s.sql, studioId, (await deliveryOf(ep.id, failed))!.id)).rejects.toThrow(/disabled/);

    const on = await setEndpointEnabled(s.sql, ep.id, true, studioId);
    expect(on).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
    const after = await recordEvent(s.sql, studioId);
    await until(() => r.of(after).length === 1, 10_000, 'an event after re-enabling');
    expect(r.of(whileOff)).toEqual([]); // recorded while it was off: not delivered (replay it if wanted)
    const replayed = await replayDelivery(s.sql, studioId, (await deliveryOf(ep.id, failed))!.id);
    expect(replayed.status).toBe('pending');
    await until(() => r.of(failed).length === 4, 10_000, 'the replay');
    await until(async () => (await deliveryOf(ep.id, failed))?.status === 'succeeded', 10_000, 'the replay recorded');
  });

  test('an endpoint failing every attempt for 3 days is disabled, saying why', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver([], 503);
    const { endpoint: ep } = await endpoint(studioId, r.url);
    await s.sql`update webhook_endpoints set failing_since = now() - interval '3 days 1 minute' where id = ${ep.id}`;
    dispatcher();
    const eventId = await recordEvent(s.sql, studioId);
    await until(async () => !(await getEndpoint(s.sql, ep.id)).enabled, 10_000, 'the endpoint disabled');
    const off = await getEndpoint(s.sql, ep.id);
    expect(off.disabledReason).toMatch(/^Every delivery attempt failed for 3 days \(since \d{4}-/);
    expect((await deliveryOf(ep.id, eventId))!.status).toBe('failed');
    // one success clears the run of failures
    await setEndpointEnabled(s.sql, ep.id, true);
    await s.sql`update webhook_endpoints set failing_since = now() - interval '1 day' where id = ${ep.id}`;
    r.answer(200);
    const ok = await recordEvent(s.sql, studioId);
    await until(async () => (await deliveryOf(ep.id, ok))?.status === 'succeeded', 10_000, 'a success');
    expect((await getEndpoint(s.sql, ep.id)).failingSince).toBeNull();
  });

  test('a success ends a run of failures that began while it was in flight (the batched success clears it too)', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver([{ status: 200, delayMs: 600 }]);
    const { endpoint: ep } = await endpoint(studioId, r.url);
    dispatcher();
    const eventId = await recordEvent(s.sql, studioId);
    await until(async () => r.received.length === 1, 10_000, 'the delivery in flight');
    // meanwhile another delivery to the endpoint failed: claimed with no run of failures, this one succeeds after it
    await s.sql`update webhook_endpoints set failing_since = now() where id = ${ep.id}`;
    await until(async () => (await deliveryOf(ep.id, eventId))?.status === 'succeeded', 10_000, 'the success');
    expect((await getEndpoint(s.sql, ep.id)).failingSince).toBeNull();
  });

  test('a retry delay longer than 24 days (past a 32-bit count of milliseconds) is scheduled, not refused', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver([], 500);
    const { endpoint: ep } = await endpoint(studioId, r.url);
    dispatcher({ retryScheduleMs: [30 * 86_400_000] });
    const eventId = await recordEvent(s.sql, studioId);
    await until(async () => (await deliveryOf(ep.id, eventId))?.attempts === 1, 10_000, 'the first attempt recorded');
    const [row] = await s.sql<{ status: string; days: number }[]>`
      select status, (extract(epoch from next_attempt_at - now()) / 86400)::float8 as days from webhook_deliveries
      where endpoint_id = ${ep.id} and event_id = ${eventId}`;
    expect(row!.status).toBe('pending');
    expect(row!.days).toBeGreaterThan(26); // 30 days, jittered by 10 %
    expect(r.received).toHaveLength(1);
  });

  test("1,000 events of four studios to 16 endpoints each fan out, in transactions of at most 2,000 deliveries and a studio's turn of at most 500 in each (16,000 in all)", async () => {
    const studios = await Promise.all(Array.from({ length: 4 }, async () => (await s.studio()).id));
    for (const studioId of studios)
      for (let i = 0; i < 16; i++) await endpoint(studioId, `http://127.0.0.1:9/hook${i}`);
    const events = studios.flatMap((studioId) =>
      Array.from({ length: FAN_OUT_BATCH / 4 }, () => ({
        studio_id: studioId,
        id: newId('event'),
        type: 'room.deleted',
        resource: 'room',
        data: s.sql.json({ object: { id: 'roo_test' } } as never),
      })),
    );
    await s.sql`insert into events ${s.sql(events)}`; // one write's events, as a location delete with its rooms records them
    const counts = async () => {
      const rows = await s.sql<{ studioId: string; n: number }[]>`
        select studio_id, count(*)::int as n from webhook_deliveries where studio_id in ${s.sql(studios)} group by 1`;
      return studios.map((id) => rows.find((r) => r.studioId === id)?.n ?? 0);
    };
    let transactions = 0;
    for (let before = await counts(); ; transactions++) {
      const moved = (await fanOutBatch(s.sql, 1_000_000)) || (await catchUpDeferred(s.sql, 1_000_000));
      if (!moved) break;
      const after = await counts();
      const made = after.map((n, i) => n - before[i]!);
      expect(made.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(FAN_OUT_DELIVERIES);
      for (const n of made) expect(n).toBeLessThanOrEqual(FAN_OUT_TURN);
      before = after;
    }
    expect(await counts()).toEqual(studios.map(() => 16 * (FAN_OUT_BATCH / 4)));
    expect(transactions).toBeGreaterThanOrEqual((16 * FAN_OUT_BATCH) / FAN_OUT_DELIVERIES);
  });

  test('a fan-out that keeps failing holds back only the new events: deliveries already made still go', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver();
    await endpoint(studioId, r.url);
    const made = await recordEvent(s.sql, studioId);
    while ((await fanOutBatch(s.sql, s.config.WEBHOOK_PENDING_BUDGET)) > 0);
    // a statement Postgres refuses on every round, for this test's next event only
    await s.sql`create function refuse_poison_delivery() returns trigger language plpgsql as
      $$ begin raise exception 'refused for the test'; end $$`.simple();
    await s.sql`create trigger refuse_poison before insert on webhook_deliveries for each row
      when (new.event_type = 'poison.refused') execute function refuse_poison_delivery()`.simple();
    cleanups.push(async () => {
      await s.sql`drop trigger refuse_poison on webhook_deliveries`.simple();
      await s.sql`drop function refuse_poison_delivery()`.simple();
    });
    const poison = await recordEvent(s.sql, studioId, 'poison.refused');
    dispatcher();
    await until(() => r.of(made).length === 1, 10_000, 'the delivery made before the failing fan-out');
    expect(r.of(poison)).toEqual([]);
  });

  test('a write begun before the endpoint was created and committed after it: its event is delivered', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver();
    const writer = createSql(s.config.DATABASE_URL, { max: 1 });
    cleanups.push(() => writer.end());
    const eventId = newId('event');
    let recorded!: () => void;
    let commit!: () => void;
    const inserted = new Promise<void>((resolve) => (recorded = resolve));
    const committed = new Promise<void>((resolve) => (commit = resolve));
    // the write's transaction starts (its event's created_at) and records its event, then waits
    const writing = writer.begin(async (tx) => {
      await tx`insert into events (studio_id, id, type, resource, data) values (${studioId}, ${eventId}, 'instructor.created', 'instructor', ${tx.json({ object: { id: 'ins_test' } } as never)})`;
      recorded();
      await committed;
    });
    await inserted;
    await Bun.sleep(20);
    const { endpoint: ep } = await endpoint(studioId, r.url);
    commit();
    await writing;
    dispatcher();
    await until(() => r.of(eventId).length === 1, 10_000, 'the event committed after the endpoint was made');
    expect((await deliveryOf(ep.id, eventId))?.status).toBeDefined();
  });

  test('subscriptions: only the chosen types, and only events recorded after the endpoint was created', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver();
    const before = await recordEvent(s.sql, studioId, 'class.created');
    await Bun.sleep(20);
    const { endpoint: ep } = await endpoint(studioId, r.url, ['class.created', 'class.cancelled']);
    expect(ep.events).toEqual(['class.cancelled', 'class.created']);
    dispatcher();
    const other = await recordEvent(s.sql, studioId, 'instructor.created');
    const wanted = await recordEvent(s.sql, studioId, 'class.created');
    await until(() => r.of(wanted).length === 1, 10_000, 'the subscribed type');
    await Bun.sleep(300);
    expect(r.of(before)).toEqual([]);
    expect(r.of(other)).toEqual([]);
    expect(r.received).toHaveLength(1);
  });
});

describe('many dispatchers, slow receivers', () => {
  test('two dispatchers against one database deliver each attempt once', async () => {
    const { id: studioId } = await s.studio();
    const [r1, r2] = [receiver(), receiver([], { status: 200, delayMs: 5 })];
    const { endpoint: e1 } = await endpoint(studioId, r1.url);
    const { endpoint: e2 } = await endpoint(studioId, r2.url);
    const pools: Sql[] = [createSql(s.config.DATABASE_URL, { max: 5 }), createSql(s.config.DATABASE_URL, { max: 5 })];
    cleanups.push(() => Promise.all(pools.map((p) => p.end())));
    for (const sql of pools) dispatcher({ sql, maxInFlight: 8 });
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push(await recordEvent(s.sql, studioId));
    await until(() => r1.received.length >= 150 && r2.received.length >= 150, 20_000, '300 deliveries');
    await Bun.sleep(500);
    for (const r of [r1, r2]) {
      expect(r.received).toHaveLength(150);
      expect(new Set(r.received.map((x) => x.headers['webhook-id']))).toEqual(new Set(ids));
    }
    const [{ attempts, deliveries }] = (await s.sql`
      select (select count(*) from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id in ${s.sql([e1.id, e2.id])})::int as attempts,
             (select count(*) from webhook_deliveries where endpoint_id in ${s.sql([e1.id, e2.id])} and status = 'succeeded')::int as deliveries`) as unknown as [
      { attempts: number; deliveries: number },
    ];
    expect({ attempts, deliveries }).toEqual({ attempts: 300, deliveries: 300 });
  });

  test('one slow receiver holds only its own share: the others are delivered meanwhile', async () => {
    const { id: studioId } = await s.studio();
    const slow = receiver([], { status: 200, delayMs: 3_000 });
    const fast = receiver();
    await endpoint(studioId, slow.url);
    await endpoint(studioId, fast.url);
    // 2 at once per endpoint, 4 in all: without the per-endpoint bound the slow one would take all 4
    const d = dispatcher({
      config: { ...s.config, WEBHOOK_ENDPOINT_CONCURRENCY: 2 },
      maxInFlight: 4,
      timeoutMs: 6_000,
    });
    for (let i = 0; i < 20; i++) await recordEvent(s.sql, studioId);
    await until(() => fast.received.length === 20, 10_000, 'the fast receiver');
    // all 20 went while the slow one still held its first two (it answers after 3 s)
    expect(slow.received.length).toBeLessThanOrEqual(2);
    expect(d.inFlight).toBeLessThanOrEqual(4);
  });

  test("one studio's slow endpoints together hold at most three quarters of the slots: another studio is delivered meanwhile", async () => {
    const { id: crowded } = await s.studio();
    const { id: other } = await s.studio();
    const slow = receiver([], { status: 200, delayMs: 3_000 });
    const fast = receiver();
    for (const path of ['a', 'b', 'c']) await endpoint(crowded, `${slow.url}${path}`);
    await endpoint(other, fast.url);
    // 4 slots, 2 per endpoint: three endpoints of one studio could take all 4; its share is 3
    const d = dispatcher({
      config: { ...s.config, WEBHOOK_ENDPOINT_CONCURRENCY: 2 },
      maxInFlight: 4,
      timeoutMs: 6_000,
    });
    for (let i = 0; i < 6; i++) await recordEvent(s.sql, crowded);
    for (let i = 0; i < 5; i++) await recordEvent(s.sql, other);
    await until(() => fast.received.length === 5, 2_500, "the other studio's deliveries");
    expect(slow.received.length).toBeLessThanOrEqual(3);
    expect(d.inFlight).toBeLessThanOrEqual(4);
  });
});

describe('secrets, test events, the log, metrics', () => {
  test('a rolled secret signs beside the new one for the grace; after it, the new one alone', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver();
    const { endpoint: ep, secret: old } = await endpoint(studioId, r.url);
    dispatcher();
    const rolled = await rollEndpointSecret(ctx, ep.id, { studioId });
    expect(rolled.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rolled.secret).not.toBe(old);
    expect(Date.parse(rolled.endpoint.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    const during = await recordEvent(s.sql, studioId);
    await until(() => r.of(during).length === 1, 10_000, 'a delivery during the roll');
    const got = r.of(during)[0]!;
    expect(got.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(old).verify(got.body, got.headers)).not.toThrow();
    expect(() => new Webhook(rolled.secret).verify(got.body, got.headers)).not.toThrow();

    const now = await rollEndpointSecret(ctx, ep.id, { graceMs: 0 });
    expect(now.endpoint.previousSecretExpiresAt).toBeNull();
    const after = await recordEvent(s.sql, studioId);
    await until(() => r.of(after).length === 1, 10_000, 'a delivery after the roll');
    const late = r.of(after)[0]!;
    expect(late.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(() => new Webhook(now.secret).verify(late.body, late.headers)).not.toThrow();
    expect(() => new Webhook(rolled.secret).verify(late.body, late.headers)).toThrow();
  });

  test('a test event reaches the endpoint whatever it subscribes to; the log shows each attempt; a replay sends the same webhook-id again', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver([{ status: 500, body: `${'x'.repeat(2000)}` }]);
    const { endpoint: ep, secret } = await endpoint(studioId, r.url, ['plan.created']);
    dispatcher();
    const sent = await sendTestEvent(s.sql, ep.id, studioId);
    expect(sent).toMatchObject({ endpointId: ep.id, eventType: 'webhook.test', status: 'pending', attempts: [] });
    await until(() => r.of(sent.eventId).length === 2, 10_000, 'the test event, retried once');
    const body = new Webhook(secret).verify(r.of(sent.eventId)[1]!.body, r.of(sent.eventId)[1]!.headers) as {
      type: string;
      data: { object: { endpointId: string } };
    };
    expect(body.type).toBe('webhook.test');
    expect(body.data.object.endpointId).toBe(ep.id);
    await until(
      async () => (await listDeliveries(s.sql, studioId, ep.id)).deliveries[0]?.status === 'succeeded',
      5_000,
      'the log',
    );
    const [logged] = (await listDeliveries(s.sql, studioId, ep.id)).deliveries;
    expect(logged!.attempts.map((a) => a.statusCode)).toEqual([500, 200]);
    expect(Buffer.byteLength(logged!.attempts[0]!.response!)).toBe(1024); // the first 1 KB of the answer
    await replayDelivery(s.sql, studioId, logged!.id);
    await until(() => r.of(sent.eventId).length === 3, 10_000, 'the replay');
    expect(new Set(r.of(sent.eventId).map((x) => x.body)).size).toBe(1);
    // another studio sees none of it
    const { id: otherStudio } = await s.studio();
    await expect(listDeliveries(s.sql, otherStudio, ep.id)).rejects.toThrow(/no webhook endpoint/);
    await expect(replayDelivery(s.sql, otherStudio, logged!.id)).rejects.toThrow(/no webhook delivery/);
    await expect(sendTestEvent(s.sql, ep.id, otherStudio)).rejects.toThrow(/no webhook endpoint/);
  });

  test("the oldest undelivered change's age keeps growing while its figures cannot be read (Postgres away), and that is said", async () => {
    const { id: studioId } = await s.studio();
    const r = receiver([], 500); // never accepts: the delivery stays pending
    await endpoint(studioId, r.url);
    // its delivery is left due if the database goes before the first attempt: gone with its endpoint, it cannot be
    // attempted by the next test's dispatcher (and count in that test's log lines and metrics)
    cleanups.push(() => s.sql`delete from webhook_endpoints where studio_id = ${studioId}`);
    await recordEvent(s.sql, studioId);
    const metrics = createMetrics();
    const own = createSql(s.config.DATABASE_URL, { max: 2 }); // the dispatcher's database, to be taken away
    const warned: string[] = [];
    const spy = spyOn(console, 'error').mockImplementation((line: unknown) => void warned.push(String(line)));
    cleanups.push(() => spy.mockRestore());
    dispatcher({ metrics, sql: own, retryScheduleMs: [60_000] });
    const oldest = async () =>
      Number(
        /\nstudio_webhook_oldest_pending_seconds ([\d.e+-]+)\n/.exec(await (await metrics.response()).text())?.[1],
      );
    await until(async () => (await oldest()) > 0, 10_000, 'a figure read');
    await own.end({ timeout: 0 });
    const before = await oldest();
    await Bun.sleep(1_200);
    expect((await oldest()) - before).toBeGreaterThanOrEqual(1);
    await until(() => warned.some((l) => l.includes('webhook figures could not be read')), 8_000, 'the warning');
  }, 30_000);

  test("metrics on the process's /metrics, and one log line per attempt with the trace id", async () => {
    const { id: studioId } = await s.studio();
    const r = receiver([500]);
    await endpoint(studioId, r.url);
    const metrics = createMetrics();
    const lines: string[] = [];
    const spy = spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    const level = setLogLevel('info');
    cleanups.push(() => (setLogLevel(level), spy.mockRestore()));
    dispatcher({ metrics });
    const eventId = await recordEvent(s.sql, studioId);
    await until(() => r.of(eventId).length === 2, 10_000, 'two attempts');
    // this event's lines: a delivery another test left due may be attempted by this dispatcher too
    const ours = () => lines.filter((l) => l.includes('"webhook attempt"') && l.includes(eventId));
    await until(() => ours().length === 2, 10_000, 'two log lines');
    const attempts = ours().map((l) => JSON.parse(l));
    expect(attempts[0]).toMatchObject({
      level: 'info',
      msg: 'webhook attempt',
      eventId,
      traceId: '0af7651916cd43dd8448eb211c80319c',
      attempt: 1,
      status: 500,
      outcome: 'retrying',
    });
    expect(attempts[1]).toMatchObject({ eventId, attempt: 2, status: 200, outcome: 'succeeded' });
    await until(
      async () =>
        (await (await metrics.response()).text()).includes('studio_webhook_deliveries_total{outcome="succeeded"} 1'),
      8_000,
      'the counter',
    );
    const text = await (await metrics.response()).text();
    expect(text).toContain('studio_webhook_deliveries_total{outcome="retrying"} 1');
    expect(text).toMatch(/\nstudio_webhook_pending \d+\n/);
    expect(text).toMatch(/\nstudio_webhook_deferred_studios 0\n/);
    expect(text).toMatch(/\nstudio_webhook_oldest_pending_seconds [\d.e+-]+\n/);
    // (that the exposition is valid for Prometheus, `promtool check metrics`, is scripts/ci/metrics-lint.ts's to check)
  });

  test('attempts and finished deliveries older than 30 days are deleted; newer ones stay', async () => {
    const { id: studioId } = await s.studio();
    const r = receiver();
    const { endpoint: ep } = await endpoint(studioId, r.url);
    dispatcher();
    const [oldEvent, newEvent] = [await recordEvent(s.sql, studioId), await recordEvent(s.sql, studioId)];
    await until(
      async () =>
        (await deliveryOf(ep.id, newEvent))?.status === 'succeeded' &&
        (await deliveryOf(ep.id, oldEvent))?.status === 'succeeded',
      5_000,
      'both delivered',
    );
    const old = (await deliveryOf(ep.id, oldEvent))!;
    await s.sql`update webhook_deliveries set updated_at = now() - interval '31 days' where id = ${old.id}`;
    await s.sql`update webhook_attempts set at = now() - interval '31 days' where delivery_id = ${old.id}`;
    expect(await deleteExpired(s.sql)).toBeGreaterThanOrEqual(2);
    expect(await deliveryOf(ep.id, oldEvent)).toBeUndefined();
    expect((await deliveryOf(ep.id, newEvent))!.status).toBe('succeeded');
    expect((await listDeliveries(s.sql, studioId, ep.id)).deliveries[0]!.attempts).toHaveLength(1);
  });
});
