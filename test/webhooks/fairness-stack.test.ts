/**
 * Webhooks are fair across studios (docs/design/webhooks.md, "Fairness"), through the gateway in both modes: while
 * studio A writes recurring classes (366 events each) to 16 endpoints that take 3 s to answer, studio B's deliveries
 * arrive within a second of its writes. Before, claims took the oldest due deliveries of all studios first and the
 * fan-out expanded A's whole burst before B's event: B waited 4-16 s. A's backlog passes its budget, so its later
 * events wait (deferred, not dropped), and A's dashboard says so.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createEndpoint, webhookContext } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { get, signIn } from '../../dashboard/test/dashboard-helpers';
import { classBody, future, instructor } from '../../management-service/test/fixtures';
import { type Stack, startStack } from '../harness';
import { startReceiver, until } from './helpers';

const A_CLASSES = 16; // 16 x 366 events x 16 endpoints: 93,696 deliveries, past the budget of 10,000
const SLOW_MS = 3_000;

describe.each([
  ['Redis mode', {}],
  ['single-node mode', { redis: 'none' as const }],
])('%s', (_mode, options) => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ ...options, env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
  });
  afterAll(() => s.close());

  test("studio B's deliveries arrive within 1 s of its writes while studio A's burst of 93,696 to slow endpoints is pending; A's later events wait, and its dashboard says so", async () => {
    const ctx = webhookContext(s.sql, s.config);
    const slow = startReceiver([], { status: 200, delayMs: SLOW_MS });
    const fast = startReceiver();
    const dispatcher = createDispatcher({ sql: s.sql, config: s.config });
    dispatcher.start();
    try {
      const { id: a } = await s.studio();
      const { id: b } = await s.studio();
      const aKey = (await s.key(a, 'secret', ['classes:write', 'classes:read'])).key;
      const bKey = (await s.key(b, 'secret', ['instructors:write', 'instructors:read'])).key;
      for (let i = 0; i < 16; i++) await createEndpoint(ctx, { studioId: a, url: `${slow.url}/${i}` });
      await createEndpoint(ctx, { studioId: b, url: fast.url, events: ['instructor.created'] });
      const instructors = await Promise.all(Array.from({ length: A_CLASSES }, () => instructor(s, a)));

      const post = (key: string, path: string, body: unknown) =>
        s.mg(path, key, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify(body),
        });
      let aDone = false;
      const aWrites = (async () => {
        for (const [i, ins] of instructors.entries()) {
          const res = await post(
            aKey,
            '/v1/classes',
            classBody(ins, { startsAt: future(2, i), recurrence: { intervalDays: 1, count: 365 } }),
          );
          expect(res.status).toBe(201);
        }
        aDone = true;
      })();

      // B writes every 250 ms during A's burst and for 3 s after it (A's first deliveries are still in flight)
      const bWrites: { id: string; answeredAt: number }[] = [];
      let doneAt = Number.POSITIVE_INFINITY;
      while (Date.now() < doneAt) {
        const res = await post(bKey, '/v1/instructors', { name: `B ${bWrites.length}`, disciplines: ['yoga'] });
        expect(res.status).toBe(201);
        bWrites.push({ id: ((await res.json()) as { id: string }).id, answeredAt: Date.now() });
        if (aDone && doneAt === Number.POSITIVE_INFINITY) doneAt = Date.now() + SLOW_MS;
        await Bun.sleep(250);
      }
      await aWrites;
      const arrivalOf = (id: string) =>
        fast.received.find((r) => (JSON.parse(r.body) as { data: { object: { id: string } } }).data.object.id === id);
      await until(() => bWrites.every((w) => arrivalOf(w.id)), 10_000, "B's deliveries");
      const delays = bWrites.map((w) => arrivalOf(w.id)!.at - w.answeredAt);
      expect(bWrites.length).toBeGreaterThan(12);
      expect(Math.max(...delays)).toBeLessThan(1_000);

      // A's burst is being delivered, its backlog is at the budget and the rest of its events wait, as its page says
      expect(slow.received.length).toBeGreaterThan(0);
      const [pending] = await s.sql<{ n: number }[]>`
        select count(*)::int as n from webhook_deliveries where studio_id = ${a} and status = 'pending'`;
      expect(pending!.n).toBeGreaterThan(s.config.WEBHOOK_PENDING_BUDGET - 200);
      expect(pending!.n).toBeLessThan(s.config.WEBHOOK_PENDING_BUDGET + 16);
      const deferred = await s.sql`select 1 from webhook_fanout_deferred where studio_id = ${a}`;
      expect(deferred).toHaveLength(1);
      const aPage = await (await get(s, '/webhooks', (await signIn(s, a)).cookie)).text();
      expect(
        /<strong>New events are waiting<\/strong> \(since <time[^>]*>[^<]+<\/time>\): [\d,]+( or more)? deliveries are waiting/.test(
          aPage,
        ),
      ).toBe(true);
      const bPage = await (await get(s, '/webhooks', (await signIn(s, b)).cookie)).text();
      expect(bPage.includes('data-backlog')).toBe(false);
    } finally {
      await dispatcher.stop();
      slow.stop();
      fast.stop();
    }
  }, 90_000);
});
