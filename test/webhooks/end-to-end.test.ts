/**
 * From a Management write to a receiver (docs/design/events.md, webhooks.md): a create through the gateway records its
 * event in its own transaction; the dispatcher fans it out and delivers it, signed, with the write's
 * request id in the body and its trace id on the event.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createEndpoint, webhookContext } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { Webhook } from 'standardwebhooks';
import { type Stack, startStack } from '../harness';
import { startReceiver, until } from './helpers';

let s: Stack;
beforeAll(async () => (s = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } })));
afterAll(() => s.close());

test('a Management create through the gateway reaches the receiver, signed, as the feed serves it', async () => {
  const { id: studioId } = await s.studio();
  const { key } = await s.key(studioId, 'secret', ['instructors:write', 'instructors:read']);
  const r = startReceiver();
  // a 10 s poll: a delivery within a few seconds came by the write's NOTIFY
  const dispatcher = createDispatcher({ sql: s.sql, config: s.config, pollMs: 10_000 });
  dispatcher.start();
  try {
    const { secret } = await createEndpoint(webhookContext(s.sql, s.config), {
      studioId,
      url: r.url,
      events: ['instructor.created'],
    });
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await s.mg('/v1/instructors', key, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID(), traceparent },
      body: JSON.stringify({ name: 'Ana Ruiz', disciplines: ['pilates'] }),
    });
    expect(res.status).toBe(201);
    const instructor = await res.json();
    // (measured from here: the test's own check of the answer against the OpenAPI document holds the event loop a while)
    const answered = Date.now();
    await until(() => r.received.length === 1, 15_000, 'the webhook');
    const got = r.received[0]!;
    expect(got.at - answered).toBeLessThan(4_000);
    const event = new Webhook(secret).verify(got.body, got.headers) as {
      id: string;
      type: string;
      data: { object: unknown };
      requestId: string;
    };
    expect(event).toMatchObject({
      type: 'instructor.created',
      data: { object: instructor },
      requestId: res.headers.get('x-request-id')!,
    });
    expect(got.headers['webhook-id']).toBe(event.id);
    const [stored] = await s.sql<{ traceId: string }[]>`select trace_id from events where id = ${event.id}`;
    expect(stored!.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  } finally {
    await dispatcher.stop();
    r.stop();
  }
});
