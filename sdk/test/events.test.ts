/**
 * Events and webhooks through the SDK (docs/design/events.md, webhooks.md): a delivery the dispatcher made is
 * verified and narrowed by its type; `events.follow` hands over every event in the feed's order and, started again
 * after the last id it handled, goes on without missing or repeating one.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createEndpoint, webhookContext } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { SCOPES } from '@studio/shared';
import { type Stack, startStack } from '../../test/harness';
import { startReceiver, until } from '../../test/webhooks/helpers';
import { Studio, type StudioEvent, verifyWebhook, WebhookVerificationError } from '../src/index';

let s: Stack;
beforeAll(async () => (s = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } })));
afterAll(() => s?.close());

test('a webhook the dispatcher delivered is verified, and its type narrows data.object', async () => {
  const { id: studioId } = await s.studio();
  const key = (await s.key(studioId, 'secret', SCOPES)).key as `svc_sk_${string}`;
  const studio = new Studio({ apiKey: key, baseUrl: s.managementUrl });
  const r = startReceiver();
  const dispatcher = createDispatcher({ sql: s.sql, config: s.config, pollMs: 200 });
  dispatcher.start();
  try {
    const { secret } = await createEndpoint(webhookContext(s.sql, s.config), {
      studioId,
      url: r.url,
      events: ['instructor.created', 'plan.updated'],
    });
    const instructor = await studio.instructors.create({ name: 'Ana Ruiz', disciplines: ['pilates'] });
    await until(() => r.received.length === 1, 15_000, 'the webhook');
    const got = r.received[0]!;
    const event = studio.webhooks.verify(got.body, got.headers, secret);
    if (event.type !== 'instructor.created') throw new Error(`got ${event.type}`);
    // narrowed: an instructor's own field, no cast
    expect(event.data.object.disciplines).toEqual(['pilates']);
    expect(event.data.object).toEqual(instructor);
    // the standalone function needs no client, and takes a Headers too
    expect(verifyWebhook(got.body, new Headers(got.headers), secret).id).toBe(event.id);
    expect(() => verifyWebhook(`${got.body} `, got.headers, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(got.body, got.headers, `whsec_${btoa('another secret of 24 bytes')}`)).toThrow(
      WebhookVerificationError,
    );
  } finally {
    await dispatcher.stop();
    r.stop();
  }
});

test('events.follow hands over every event in order, and a follower started again after the last id handled misses and repeats none', async () => {
  const { id: studioId } = await s.studio();
  const key = (await s.key(studioId, 'secret', SCOPES)).key as `svc_sk_${string}`;
  const studio = new Studio({ apiKey: key, baseUrl: s.managementUrl });
  for (let i = 0; i < 5; i++) await studio.instructors.create({ name: `Before ${i}` });

  // the first follower handles 3 events, then stops (as a process that is stopped would)
  const handled: StudioEvent[] = [];
  for await (const event of studio.events.follow({ interval: 50 })) {
    handled.push(event);
    if (handled.length === 3) break;
  }
  // more happen while no follower runs
  for (let i = 0; i < 4; i++) await studio.instructors.create({ name: `While stopped ${i}` });

  // a new one, from the last id handled, goes on, waits for what has not happened yet, and is stopped by its signal
  const controller = new AbortController();
  const follower = (async () => {
    for await (const event of studio.events.follow({
      after: handled.at(-1)!.id,
      interval: 50,
      signal: controller.signal,
    })) {
      handled.push(event);
      if (handled.length === 12) controller.abort();
    }
  })();
  await Bun.sleep(300);
  for (let i = 0; i < 3; i++) await studio.instructors.create({ name: `Later ${i}` });
  await Promise.race([
    follower,
    Bun.sleep(10_000).then(() => Promise.reject(new Error('the follower did not see the later events'))),
  ]);

  const feed: string[] = [];
  for await (const e of studio.events.list({ limit: 100 })) feed.push(e.id);
  expect(feed).toHaveLength(12);
  expect(handled.map((e) => e.id)).toEqual(feed);
  const names = handled.map((e) => (e.type === 'instructor.created' ? e.data.object.name : e.type));
  expect(names.slice(-3)).toEqual(['Later 0', 'Later 1', 'Later 2']);
});

test('events.follow waits out an outage longer than its calls retry, and a refusal ends it', async () => {
  const { id: studioId } = await s.studio();
  const key = (await s.key(studioId, 'secret', SCOPES)).key as `svc_sk_${string}`;
  await new Studio({ apiKey: key, baseUrl: s.managementUrl }).instructors.create({ name: 'After the outage' });
  let down = 3;
  const flaky = (url: string, init: RequestInit) =>
    down-- > 0 ? Promise.reject(new TypeError('connection refused')) : fetch(url, init);
  const studio = new Studio({ apiKey: key, baseUrl: s.managementUrl, fetch: flaky, maxRetries: 0 });
  for await (const event of studio.events.follow({ interval: 20 })) {
    expect(event.type).toBe('instructor.created');
    break;
  }
  expect(down).toBeLessThan(0);
  const revoked = new Studio({ apiKey: `svc_sk_${'y'.repeat(32)}`, baseUrl: s.managementUrl });
  const err = await (async () => {
    for await (const _ of revoked.events.follow({ interval: 20 })) return null;
  })().catch((e) => e);
  expect(err?.code).toBe('api_key_invalid');
});
