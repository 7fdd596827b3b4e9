/**
 * Fairness inside the dispatcher (docs/design/webhooks.md, "Fairness"), with real receivers and Postgres:
 * - an endpoint that hangs does not hold its studio's other endpoints' deliveries (three hanging receivers held a
 *   healthy one's for up to 10 s: they filled the studio's 48 slots);
 * - a studio past its pending budget has its later events deferred, never dropped: each delivered exactly once when
 *   its backlog drains, while another studio's deliveries go at once; the gauge and the backlog read say so.
 */
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { createEndpoint, deleteEndpoint, studioBacklog, webhookContext } from '@studio/control';
import { createDispatcher, type DispatcherDeps } from '@studio/management-service/webhooks';
import { newId } from '@studio/shared';
import { pendingStats } from '../../management-service/src/webhooks/queries';
import { freshDatabase, recordEvent, startReceiver, type TestDatabase, until } from './helpers';

let s: TestDatabase;
beforeAll(async () => {
  s = await freshDatabase({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
});
afterAll(() => s.close());

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
function dispatcher(o: Partial<DispatcherDeps> = {}) {
  const d = createDispatcher({ sql: s.sql, config: s.config, timeoutMs: 10_000, pollMs: 200, ...o });
  d.start();
  cleanups.push(() => d.stop(1_000));
  return d;
}
function receiver(...args: Parameters<typeof startReceiver>) {
  const r = startReceiver(...args);
  cleanups.push(() => r.stop());
  return r;
}
async function endpoint(studioId: string, url: string) {
  const { endpoint: e } = await createEndpoint(webhookContext(s.sql, s.config), { studioId, url });
  cleanups.push(() => deleteEndpoint(s.sql, e.id).catch(() => {}));
  return e;
}
/** `n` events of one studio, recorded in one transaction (as one write's events are). */
async function recordEvents(studioId: string, n: number): Promise<string[]> {
  const events = Array.from({ length: n }, () => ({
    studio_id: studioId,
    id: newId('event'),
    type: 'instructor.updated',
    resource: 'instructor',
    data: s.sql.json({ object: { id: 'ins_test' } } as never),
  }));
  await s.sql.begin(async (tx) => {
    await tx`insert into events ${tx(events)}`;
    await tx`select pg_notify('studio_events', '')`;
  });
  return events.map((e) => e.id);
}

test("three endpoints that hang do not hold their studio's healthy endpoint: its deliveries arrive within 1 s", async () => {
  const { id: studioId } = await s.studio();
  const hanging = receiver([], 'hang');
  const healthy = receiver();
  for (let i = 0; i < 3; i++) await endpoint(studioId, `${hanging.url}/${i}`);
  await endpoint(studioId, healthy.url);
  dispatcher();
  const ids = await recordEvents(studioId, 40);
  const recordedAt = Date.now();
  await until(() => healthy.received.length === ids.length, 5_000, "the healthy endpoint's deliveries");
  expect(Math.max(...healthy.received.map((r) => r.at)) - recordedAt).toBeLessThan(1_000);
  expect(new Set(healthy.received.map((r) => r.headers['webhook-id']))).toEqual(new Set(ids));
  // in flight to the hanging ones: at most half of the 64 slots, and one more for an endpoint with none in flight
  expect(hanging.received.length).toBeLessThanOrEqual(33);
});

test('a studio past its pending budget waits, deferred; another studio does not; each deferred event is delivered exactly once when the backlog drains', async () => {
  const budget = 40;
  const { id: a } = await s.studio();
  const { id: b } = await s.studio();
  // A's receiver holds every request until it is opened
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const arrivals: string[] = [];
  const gated = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      arrivals.push(`${new URL(req.url).pathname} ${req.headers.get('webhook-id')}`);
      await opened;
      return new Response('ok');
    },
  });
  cleanups.push(() => gated.stop(true));
  const fast = receiver();
  for (let i = 0; i < 4; i++) await endpoint(a, `http://127.0.0.1:${gated.port}/hooks/${i}`);
  await endpoint(b, fast.url);
  dispatcher({ config: { ...s.config, WEBHOOK_PENDING_BUDGET: budget } });

  const first = await recordEvents(a, 100);
  await until(
    async () => (await s.sql`select 1 from webhook_fanout_deferred where studio_id = ${a}`).length === 1,
    5_000,
    "A's deferral",
  );
  // 10 events of 4 deliveries reach the budget: the 11th and every later one wait
  const made = async (studioId: string) =>
    (await s.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where studio_id = ${studioId}`)[0]!
      .n;
  expect(await made(a)).toBe(budget);
  const stats = await pendingStats(s.sql);
  expect(stats.deferredStudios).toBe(1);
  expect(stats.oldestSeconds).toBeGreaterThan(0);
  expect(await studioBacklog(s.sql, a, budget)).toMatchObject({ pending: budget, atBudget: true });
  expect((await studioBacklog(s.sql, a, budget)).deferredSince).toBeInstanceOf(Date);
  expect(await studioBacklog(s.sql, b, budget)).toEqual({ pending: 0, atBudget: false, deferredSince: null });

  // B is not held back, and A's events recorded meanwhile wait behind A's deferred ones
  const bEvent = await recordEvent(s.sql, b);
  const bRecordedAt = Date.now();
  await until(() => fast.of(bEvent).length === 1, 2_000, "B's delivery");
  expect(fast.of(bEvent)[0]!.at - bRecordedAt).toBeLessThan(1_000);
  const later = await recordEvents(a, 5);
  await Bun.sleep(300);
  expect(await made(a)).toBe(budget);

  open();
  const everyEvent = [...first, ...later];
  await until(() => arrivals.length >= everyEvent.length * 4, 20_000, "A's deliveries, deferred ones included");
  await until(
    async () => (await s.sql`select 1 from webhook_fanout_deferred where studio_id = ${a}`).length === 0,
    5_000,
    "A's catching up",
  );
  // exactly once each: every (endpoint, event) pair, none twice
  const expected = everyEvent.flatMap((id) => [0, 1, 2, 3].map((i) => `/hooks/${i} ${id}`));
  expect(arrivals.toSorted()).toEqual(expected.toSorted());
  const rows = await s.sql<{ status: string; attempts: number; n: number }[]>`
    select status, attempts, count(*)::int as n from webhook_deliveries where studio_id = ${a} group by 1, 2`;
  await until(
    async () =>
      (await s.sql`select 1 from webhook_deliveries where studio_id = ${a} and status <> 'succeeded' limit 1`)
        .length === 0,
    5_000,
    'every delivery recorded',
  );
  expect(rows.reduce((sum, r) => sum + r.n, 0)).toBe(everyEvent.length * 4);

  // caught up: a new event of A goes by the ordinary fan-out again
  const next = await recordEvent(s.sql, a);
  await until(() => arrivals.filter((x) => x.endsWith(next)).length === 4, 5_000, "A's next event");
  expect((await pendingStats(s.sql)).deferredStudios).toBe(0);
}, 60_000);
