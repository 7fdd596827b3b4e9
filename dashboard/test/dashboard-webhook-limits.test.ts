/**
 * Test events and replays from the dashboard are limited per endpoint, 10 at once then 1 a second (unlimited, one
 * session made 2,000 in 4.4 s), counted in Postgres: two dashboard processes over one database share the count.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createEndpoint, webhookContext } from '@studio/control';
import { createDashboard } from '@studio/dashboard';
import { broadcastsFor, readinessCheck } from '@studio/shared/io';
import { type Stack, serveSurface, startStack } from '../../test/harness';
import { form, signIn } from './dashboard-helpers';

/** A public address written as an IP: creation checks it, nothing connects to it (no dispatcher runs here). */
const PUBLIC_URL = 'https://93.184.215.14/hooks';

let s: Stack;
let server: ReturnType<typeof serveSurface>;
beforeAll(async () => {
  s = await startStack();
  // a second dashboard process over the same database (and Redis)
  const bus = broadcastsFor(s.config, s.sql, s.redis);
  const readiness = readinessCheck(s.sql, s.redis);
  server = serveSurface(createDashboard({ config: s.config, sql: s.sql, readiness, bus }));
});
afterAll(async () => {
  server?.stop(true);
  await s?.close();
});

const deliveries = async (endpointId: string) =>
  (
    await s.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpointId}`
  )[0]!.n;

test('the 11th test event in a second to an endpoint is refused across two dashboards, writing nothing; another endpoint is not affected; a second later one more goes', async () => {
  const { id: studioId } = await s.studio();
  const session = await signIn(s, studioId);
  const dashboards = [s.dashboardUrl, `http://127.0.0.1:${server.port}`];
  const post = (n: number, path: string) =>
    fetch(dashboards[n % 2] + path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: form({ csrf: session.csrf }),
    });
  const ctx = webhookContext(s.sql, s.config);
  const { endpoint } = await createEndpoint(ctx, { studioId, url: PUBLIC_URL });
  const { endpoint: other } = await createEndpoint(ctx, { studioId, url: `${PUBLIC_URL}/other` });

  // 11 at once, alternating between the two dashboards
  const sent = await Promise.all(Array.from({ length: 11 }, (_, n) => post(n, `/webhooks/${endpoint.id}/test`)));
  expect(sent.map((r) => r.status).sort()).toEqual([...Array(10).fill(303), 429]);
  const refused = sent.find((r) => r.status === 429)!;
  expect(refused.headers.get('retry-after')).toBe('1');
  const html = await refused.text();
  expect(html).toContain('role="alert"');
  expect(html).toMatch(
    new RegExp(
      `Too many test events and replays to ${endpoint.id} \\(10 at once, then 1 a second\\): the next is allowed in (0\\.\\d|1) s\\.`,
    ),
  );
  expect(await deliveries(endpoint.id)).toBe(10);

  // another endpoint of the studio has a bucket of its own
  expect((await post(0, `/webhooks/${other.id}/test`)).status).toBe(303);
  expect(await deliveries(other.id)).toBe(1);

  // a replay takes from the same bucket, and is refused with it: the delivery is left as it was
  const [delivery] = await s.sql<{ id: string; updatedAt: Date }[]>`
    select id, updated_at from webhook_deliveries where endpoint_id = ${endpoint.id} limit 1`;
  const replay = await post(1, `/webhooks/${endpoint.id}/deliveries/${delivery!.id}/replay`);
  expect(replay.status).toBe(429);
  expect(await replay.text()).toContain('Too many test events and replays');
  const [after] = await s.sql<
    { updatedAt: Date }[]
  >`select updated_at from webhook_deliveries where id = ${delivery!.id}`;
  expect(after!.updatedAt).toEqual(delivery!.updatedAt);

  // a second later, one more (refilled at 1 a second, not the burst again)
  await Bun.sleep(1_100);
  expect((await post(1, `/webhooks/${endpoint.id}/test`)).status).toBe(303);
  expect((await post(0, `/webhooks/${endpoint.id}/test`)).status).toBe(429);
  expect(await deliveries(endpoint.id)).toBe(11);
});
