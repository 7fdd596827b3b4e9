/**
 * Deleting endpoints while dispatchers work through their backlog: a delete and the dispatcher's writes
 * (a claim handed back, successes recorded together, a failure recorded) touch the same deliveries. A cycle of waits
 * between them is broken by Postgres failing one with 40P01 (deadlock detected), as a cascading delete did here.
 */
import { afterAll, beforeAll, expect, spyOn, test } from 'bun:test';
import { createEndpoint, deleteEndpoint, webhookContext } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { newId } from '@studio/shared';
import { createSql } from '@studio/shared/io';
import { type Stack, startStack } from '../harness';
import { startReceiver, until } from './helpers';

const ENDPOINTS = 50;
const BACKLOG = 200;

let s: Stack;
// one attempt at a time per endpoint: most of each claim is over that bound and handed back (releaseClaims), many rows at once
beforeAll(
  async () =>
    (s = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } })),
);
afterAll(() => s.close());

/** 50 endpoints over 4 studios (16 at most a studio), one in three answering 500. */
async function endpoints(ok: string, failing: string) {
  const ctx = webhookContext(s.sql, s.config);
  const made: { studioId: string; id: string }[] = [];
  while (made.length < ENDPOINTS) {
    const { id: studioId } = await s.studio();
    for (let i = 0; i < 13 && made.length < ENDPOINTS; i++) {
      const url = `${made.length % 3 ? ok : failing}?n=${made.length}`;
      made.push({ studioId, id: (await createEndpoint(ctx, { studioId, url })).endpoint.id });
    }
  }
  return made;
}

/** 200 due deliveries each, due four of one endpoint after four of the next, so that every claim holds several of many. */
async function backlog(made: { studioId: string; id: string }[]) {
  const start = Date.now() - 60_000;
  const rows = Array.from({ length: BACKLOG * ENDPOINTS }, (_, n) => {
    const e = made[Math.floor(n / 4) % ENDPOINTS]!;
    return {
      studioId: e.studioId,
      id: newId('webhookDelivery'),
      endpointId: e.id,
      eventId: newId('event'),
      eventType: 'webhook.test',
      payload: { object: { n } } as never,
      nextAttemptAt: new Date(start + n),
    };
  });
  for (let i = 0; i < rows.length; i += 2_000)
    await s.sql`insert into webhook_deliveries ${s.sql(rows.slice(i, i + 2_000))}`;
  // half in a run of failures: recording an attempt then writes the endpoint as well as the delivery
  await s.sql`update webhook_endpoints set failing_since = now() where id in ${s.sql(made.filter((_, i) => i % 2).map((e) => e.id))}`;
}

test('50 endpoints deleted while four dispatchers work through their backlog: every delete succeeds, no deadlock', async () => {
  const ok = startReceiver([], { status: 200, delayMs: 20 });
  const failing = startReceiver([], { status: 500, delayMs: 20 });
  const made = await endpoints(ok.url, failing.url);
  await backlog(made);
  const logged: string[] = [];
  const spy = spyOn(console, 'error').mockImplementation((line: unknown) => void logged.push(String(line)));
  const dispatchers = [0, 1, 2, 3].map(() =>
    createDispatcher({ sql: s.sql, config: s.config, timeoutMs: 2_000, pollMs: 50, retryScheduleMs: [20, 20, 20] }),
  );
  // the deletes on connections of their own, as dashboards and CLIs elsewhere would make them
  const deletes = createSql(s.config.DATABASE_URL, { max: ENDPOINTS, name: 'test deletes' });
  try {
    for (const d of dispatchers) d.start();
    const attempts = async () => (await s.sql<{ n: number }[]>`select count(*)::int as n from webhook_attempts`)[0]!.n;
    await until(async () => (await attempts()) >= 500, 20_000, 'the dispatchers at work');
    // one every 40 ms: two seconds of deletes, each in the middle of the dispatchers' work
    const results = await Promise.allSettled(
      made.map(async (e, i) => {
        await Bun.sleep(i * 40);
        return deleteEndpoint(deletes, e.id);
      }),
    );
    const refused = results.flatMap((r, i) =>
      r.status === 'rejected' ? [`${made[i]!.id}: ${(r.reason as Error).message}`] : [],
    );
    expect(refused).toEqual([]);
    const [left] = await s.sql<{ endpoints: number; deliveries: number }[]>`
      select (select count(*) from webhook_endpoints)::int as endpoints, (select count(*) from webhook_deliveries)::int as deliveries`;
    expect(left).toEqual({ endpoints: 0, deliveries: 0 });
    await Bun.sleep(300); // what the dispatchers were recording as the last delete ended
    // nor did a recording fail and wait to be tried again (a deleted delivery's attempt failed the foreign key)
    expect(logged.filter((l) => /deadlock|40P01|a round failed|cannot record/.test(l))).toEqual([]);
  } finally {
    await Promise.all(dispatchers.map((d) => d.stop()));
    spy.mockRestore();
    await deletes.end({ timeout: 2 });
    ok.stop();
    failing.stop();
  }
}, 60_000);
