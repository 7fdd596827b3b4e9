/**
 * Test mode's webhooks (docs/design/test-mode.md): a sandbox's events go to the sandbox's endpoints only and a live
 * studio's to its own, through one dispatcher, each signed with its own endpoint's secret; and each feed holds only
 * its own studio's events.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createEndpoint, webhookContext } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { Webhook } from 'standardwebhooks';
import { seedDemo } from '../../scripts/lib/seed';
import { type Stack, startStack } from '../harness';
import { startReceiver, until } from './helpers';

let s: Stack;
beforeAll(async () => (s = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } })));
afterAll(() => s.close());

test("a sandbox's events reach only its endpoints, a live studio's only its own, and each feed holds only its own", async () => {
  const demo = await seedDemo(s.sql, s.config);
  const liveHook = startReceiver();
  const testHook = startReceiver();
  const dispatcher = createDispatcher({ sql: s.sql, config: s.config, pollMs: 200 });
  dispatcher.start();
  try {
    const ctx = webhookContext(s.sql, s.config);
    const live = await createEndpoint(ctx, { studioId: demo.studio.id, url: liveHook.url });
    const sandbox = await createEndpoint(ctx, { studioId: demo.sandbox.id, url: testHook.url });
    const create = (key: string, name: string) =>
      s.mg('/v1/instructors', key, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ name }),
      });
    const made = {
      live: await (await create(demo.keys.secret, 'Live Instructor')).json(),
      test: await (await create(demo.testKeys.secret, 'Test Instructor')).json(),
    };
    await until(() => liveHook.received.length >= 1 && testHook.received.length >= 1, 15_000, 'both deliveries');
    await Bun.sleep(1_000); // anything else that would come, stray ones included
    const verified = (hook: typeof liveHook, secret: string) =>
      hook.received.map(
        (r) => new Webhook(secret).verify(r.body, r.headers) as { type: string; data: { object: { id: string } } },
      );
    expect(verified(liveHook, live.secret).map((e) => [e.type, e.data.object.id])).toEqual([
      ['instructor.created', made.live.id],
    ]);
    expect(verified(testHook, sandbox.secret).map((e) => [e.type, e.data.object.id])).toEqual([
      ['instructor.created', made.test.id],
    ]);
    // and each feed: its own event, never the other's
    for (const [key, mine, theirs] of [
      [demo.keys.secret, made.live.id, made.test.id],
      [demo.testKeys.secret, made.test.id, made.live.id],
    ] as const) {
      const feed = await (await s.mg('/v1/events?type=instructor.created', key)).json();
      const ids = feed.data.map((e: { data: { object: { id: string } } }) => e.data.object.id);
      expect(ids).toContain(mine);
      expect(ids).not.toContain(theirs);
    }
  } finally {
    await dispatcher.stop();
    liveHook.stop();
    testHook.stop();
  }
});
