/**
 * Fairness inside the dispatcher (docs/design/webhooks.md, "Fairness"), with real receivers and Postgres:
 * - an endpoint that hangs does not hold its studio's other endpoints' deliveries (three hanging receivers held a
 *   healthy one's for up to 10 s: they filled the studio's 48 slots);
 * - a studio past its pending budget has its later events deferred, never dropped: each delivered exactly once when
 *   its backlog drains, while another studio's deliveries go at once; the gauge and the backlog read say so;
 * - a studio and its sandboxes are one tenant (docs/design/test-mode.md): claims take turns by tenant (a live studio
 *   with three sandboxes takes one turn, not four: claimDue directly, deterministic), the pending budget counts the tenant (a
 *   sandbox's backlog and its live studio's together defer a new event of either, not another studio's), and hanging
 *   endpoints of a studio and its sandboxes hold at most the tenant's share of the slots;
 * - fan-out takes turns: a burst is deferred past its turn in a transaction, so another studio's event behind it is
 *   expanded soon, and catch-up gives turns to the studio that waited longest for one (fanOutBatch and
 *   catchUpDeferred directly, deterministic).
 */
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { createEndpoint, deleteEndpoint, studioBacklog, webhookContext } from '@studio/control';
import { createSandbox } from '@studio/management-service/sandboxes';
import { createDispatcher, type DispatcherDeps } from '@studio/management-service/webhooks';
import { newId } from '@studio/shared';
import {
  catchUpDeferred,
  claimDue,
  FAN_OUT_TURN,
  fanOutBatch,
  pendingStats,
} from '../../management-service/src/webhooks/queries';
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
  expect(await studioBacklog(s.sql, a, budget)).toMatchObject({
    pending: budget,
    tenantPending: budget,
    atBudget: true,
  });
  expect((await studioBacklog(s.sql, a, budget)).deferredSince).toBeInstanceOf(Date);
  expect(await studioBacklog(s.sql, b, budget)).toEqual({
    pending: 0,
    tenantPending: 0,
    atBudget: false,
    deferredSince: null,
  });

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

/** A live studio and `n` sandboxes of it: [live, ...sandboxes]. */
async function tenant(n: number): Promise<string[]> {
  const { id } = await s.studio();
  const sandboxes = [];
  for (let i = 0; i < n; i++) sandboxes.push((await createSandbox(s.sql, id, `sb-${i}`)).id);
  return [id, ...sandboxes];
}
/** `n` deliveries to the endpoint, due since `agoSeconds` (the oldest first), as the fan-out makes them. */
async function backlog(studioId: string, endpointId: string, n: number, agoSeconds: number) {
  const rows = Array.from({ length: n }, (_, i) => ({
    studio_id: studioId,
    id: newId('webhookDelivery'),
    endpoint_id: endpointId,
    event_id: newId('event'),
    event_type: 'instructor.updated',
    next_attempt_at: new Date(Date.now() - (agoSeconds - i) * 1000),
  }));
  await s.sql`insert into webhook_deliveries ${s.sql(rows)}`;
}
const pendingOf = async (studioId: string) =>
  (
    await s.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_deliveries where studio_id = ${studioId} and status = 'pending'`
  )[0]!.n;
const deferredOf = async (studioIds: string[]) =>
  (
    await s.sql<
      { studioId: string }[]
    >`select studio_id from webhook_fanout_deferred where studio_id in ${s.sql(studioIds)}`
  )
    .map((r) => r.studioId)
    .toSorted();

test("a live studio with three sandboxes takes one turn per round: another studio's deliveries are claimed at the rate of that tenant as a whole", async () => {
  const a = await tenant(3);
  const [b] = await tenant(0);
  const url = 'http://127.0.0.1:9/hooks';
  // A's deliveries are older than B's: by studio, A's four studios' firsts went before B's first
  for (const studio of a) await backlog(studio, (await endpoint(studio, url)).id, 20, 600);
  await backlog(b!, (await endpoint(b!, url)).id, 20, 60);

  const claim = (limit: number, busyTenants: string[] = []) =>
    claimDue(s.sql, { limit, perEndpoint: 16, busy: [], busyTenants, lease: crypto.randomUUID(), leaseMs: 60_000 });
  const tenantOf = (studioId: string) => (a.includes(studioId) ? a[0] : studioId);

  // two slots: a tenant's first before any tenant's second (A's oldest first)
  const two = await claim(2);
  expect(two.map((c) => c.tenantId)).toEqual([a[0]!, b!]);
  expect(two.map((c) => tenantOf(c.studioId))).toEqual([a[0]!, b!]);

  // eight slots, three times: half each, and within A its four studios' endpoints in turns
  for (let round = 0; round < 3; round++) {
    const claimed = await claim(8);
    expect(claimed.filter((c) => c.tenantId === b).length).toBe(4);
    expect(claimed.filter((c) => c.tenantId === a[0]).length).toBe(4);
    expect(new Set(claimed.filter((c) => c.tenantId === a[0]).map((c) => c.studioId)).size).toBe(4);
    for (const c of claimed) expect(c.tenantId).toBe(tenantOf(c.studioId)!);
  }

  // a tenant at its in-flight bound is left out whole: none of its sandboxes' deliveries either
  const others = await claim(8, [a[0]!]);
  expect(others.length).toBeGreaterThan(0);
  expect(others.every((c) => c.studioId === b)).toBe(true);
});

test("the pending budget counts a studio and its sandboxes together: at it, a new event of either is deferred, another studio's is not, until the tenant's backlog is below it", async () => {
  const budget = 12;
  const [live, sandbox] = await tenant(1);
  const [b] = await tenant(0);
  const r = receiver();
  for (const studio of [live!, sandbox!, b!]) await endpoint(studio, r.url);
  const fanOut = (want: () => Promise<boolean>, what: string) =>
    until(async () => (await fanOutBatch(s.sql, budget), await catchUpDeferred(s.sql, budget), want()), 5_000, what);

  // six pending for the sandbox and six for its live studio: each studio below the budget, the tenant at it
  const first = [];
  for (let i = 0; i < 6; i++) first.push(await recordEvent(s.sql, sandbox!), await recordEvent(s.sql, live!));
  await fanOut(async () => (await pendingOf(live!)) === 6 && (await pendingOf(sandbox!)) === 6, 'the first deliveries');
  expect(await deferredOf([live!, sandbox!, b!])).toEqual([]);

  const later = [await recordEvent(s.sql, live!), await recordEvent(s.sql, sandbox!), await recordEvent(s.sql, b!)];
  await fanOut(async () => (await pendingOf(b!)) === 1, "B's delivery");
  expect(await deferredOf([live!, sandbox!, b!])).toEqual([live!, sandbox!].toSorted());
  expect(await pendingOf(live!)).toBe(6);
  expect(await pendingOf(sandbox!)).toBe(6);
  expect((await pendingStats(s.sql)).deferredStudios).toBe(2);
  // what the dashboard reads: each studio's own backlog, and the tenant's, at the budget
  expect(await studioBacklog(s.sql, sandbox!, budget)).toMatchObject({ pending: 6, tenantPending: 12, atBudget: true });
  expect((await studioBacklog(s.sql, sandbox!, budget)).deferredSince).toBeInstanceOf(Date);
  expect(await studioBacklog(s.sql, live!, budget)).toMatchObject({ pending: 6, tenantPending: 12, atBudget: true });
  expect(await studioBacklog(s.sql, b!, budget)).toEqual({
    pending: 1,
    tenantPending: 1,
    atBudget: false,
    deferredSince: null,
  });

  // each studio's own backlog is below the budget, the tenant's is not: nothing is let go
  expect(await catchUpDeferred(s.sql, budget)).toBe(0);
  expect(await deferredOf([live!, sandbox!])).toHaveLength(2);

  // the receiver drains the backlog (a real dispatcher, over HTTP): the deferred events follow, each exactly once
  dispatcher({ config: { ...s.config, WEBHOOK_PENDING_BUDGET: budget }, pollMs: 100 });
  const every = [...first, ...later];
  await until(() => every.every((id) => r.of(id).length === 1), 10_000, 'every delivery');
  await until(async () => (await deferredOf([live!, sandbox!])).length === 0, 5_000, 'the tenant caught up');
  await Bun.sleep(300);
  expect(r.received.length).toBe(every.length);
});

test("hanging endpoints of a studio and its sandboxes hold at most the tenant's share of the slots: another studio's deliveries arrive within 1 s", async () => {
  const a = await tenant(3);
  const [b] = await tenant(0);
  const hanging = receiver([], 'hang');
  const healthy = receiver();
  for (const studio of a) await endpoint(studio, `${hanging.url}/${studio}`);
  await endpoint(b!, healthy.url);
  dispatcher();
  for (const studio of a) for (let i = 0; i < 20; i++) await recordEvent(s.sql, studio);
  // each of A's four studios' one endpoint could take its 16 slots: by studio, together the 64 of the process
  await until(() => hanging.received.length >= 32, 5_000, "A's attempts");
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push(await recordEvent(s.sql, b!));
  const recordedAt = Date.now();
  await until(() => ids.every((id) => healthy.of(id).length === 1), 5_000, "B's deliveries");
  expect(Math.max(...healthy.received.map((x) => x.at)) - recordedAt).toBeLessThan(1_000);
  // in flight to A's hanging endpoints: at most half of the 64 slots, and one more for an endpoint with none in flight
  expect(hanging.received.length).toBeLessThanOrEqual(33);
}, 30_000);

test("a burst takes turns: another studio's event behind five studios' 16,000 deliveries is expanded by the second fan-out transaction; a turn goes first to the studio that waited longest for one; each delivery is made once", async () => {
  const studios = await Promise.all(Array.from({ length: 5 }, async () => (await s.studio()).id));
  const { id: b } = await s.studio();
  const r = receiver();
  for (const studio of studios) for (let i = 0; i < 16; i++) await endpoint(studio, `${r.url}/${studio}/${i}`);
  await endpoint(b, r.url);
  for (const studio of studios) await recordEvents(studio, 200); // 3,200 deliveries each
  const bEvent = await recordEvent(s.sql, b);
  const made = async (studioId: string) =>
    (
      await s.sql<{ n: number; events: number }[]>`
        select count(*)::int as n, count(distinct event_id)::int as events from webhook_deliveries
        where studio_id = ${studioId}`
    )[0]!;
  const turnsOf = async () =>
    Object.fromEntries(
      await Promise.all(studios.map(async (id) => [id, (await made(id)).n / (FAN_OUT_TURN - (FAN_OUT_TURN % 16))])),
    );
  const budget = 100_000;

  // the cursor passes the bursts in two transactions: each studio's first turn made, its later events deferred
  expect(await fanOutBatch(s.sql, budget)).toBeGreaterThan(0);
  expect(await fanOutBatch(s.sql, budget)).toBeGreaterThan(0);
  expect(await made(b)).toEqual({ n: 1, events: 1 });
  expect((await s.sql`select event_id from webhook_deliveries where studio_id = ${b}`)[0]!.eventId).toBe(bEvent);
  for (const studio of studios) {
    expect((await made(studio)).n).toBeLessThanOrEqual(FAN_OUT_TURN + 16);
    // taking turns is not a backlog past the budget: the dashboard says nothing of it
    expect((await studioBacklog(s.sql, studio, budget)).deferredSince).toBeNull();
  }
  const deferred = await s.sql<{ studioId: string; reason: string }[]>`
    select studio_id, reason from webhook_fanout_deferred where studio_id in ${s.sql(studios)}`;
  expect(deferred.map((d) => d.reason)).toEqual(['turn', 'turn', 'turn', 'turn', 'turn']);

  // a catch-up transaction holds four whole turns: the four deferred first take them, the fifth goes first next time
  const before = await turnsOf();
  await catchUpDeferred(s.sql, budget);
  const once = await turnsOf();
  const gained = studios.filter((id) => once[id] > before[id]);
  expect(gained).toHaveLength(4);
  const left = studios.find((id) => !gained.includes(id))!;
  await catchUpDeferred(s.sql, budget);
  expect((await turnsOf())[left]).toBeGreaterThan(once[left]);

  // to the end: every event of each studio expanded once to its 16 endpoints, and no studio deferred any more
  await until(async () => (await catchUpDeferred(s.sql, budget)) === 0, 20_000, 'the turns');
  for (const studio of studios) expect(await made(studio)).toEqual({ n: 3_200, events: 200 });
  expect(await s.sql`select 1 from webhook_fanout_deferred where studio_id in ${s.sql(studios)}`).toHaveLength(0);
}, 60_000);
