/**
 * The retry rules one by one, against a local HTTP server that answers as told (docs/design/sdk.md): which answers
 * are retried and which are not, the wait each asks, the timeout, the caller's signal. The stack's own answers are
 * client.test.ts's.
 */
import { afterAll, expect, test } from 'bun:test';
import {
  ConflictError,
  InternalServerError,
  RateLimitError,
  Studio,
  TimeoutError,
  UnprocessableEntityError,
} from '../src/index';

type Answer = { status: number; headers?: Record<string, string>; body?: unknown; delayMs?: number };
const queue: Answer[] = [];
const seen: { method: string; url: string; headers: Record<string, string>; at: number }[] = [];
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    seen.push({ method: req.method, url: req.url, headers: req.headers.toJSON(), at: performance.now() });
    const a = queue.shift() ?? { status: 200, body: {} };
    if (a.delayMs) await Bun.sleep(a.delayMs);
    return Response.json(a.body ?? {}, { status: a.status, headers: a.headers });
  },
});
afterAll(() => server.stop(true));

const problem = (status: number, code: string, extra: object = {}) => ({
  type: `https://x/docs/problems#${code}`,
  title: code,
  status,
  detail: `${code} happened`,
  code,
  instance: '/v1/classes',
  ...extra,
});

function client(o: { maxRetries?: number; timeout?: number } = {}) {
  queue.length = 0;
  seen.length = 0;
  return new Studio({ apiKey: `svc_sk_${'a'.repeat(32)}`, baseUrl: `http://127.0.0.1:${server.port}`, ...o });
}
const gaps = () => seen.slice(1).map((r, i) => r.at - seen[i]!.at);

test('409 idempotency_request_in_progress is retried with the same key; another 409 is not', async () => {
  const studio = client();
  queue.push(
    { status: 409, headers: { 'retry-after': '0' }, body: problem(409, 'idempotency_request_in_progress') },
    { status: 201, body: { id: 'ins_1', name: 'Ana' } },
  );
  expect((await studio.instructors.create({ name: 'Ana' })).id).toBe('ins_1');
  expect(seen).toHaveLength(2);
  expect(seen[1]!.headers['idempotency-key']).toBe(seen[0]!.headers['idempotency-key']!);
  expect(seen[0]!.headers['content-type']).toBe('application/json');

  queue.push({ status: 409, body: problem(409, 'coupon_code_taken') });
  const err = await studio.coupons.create({ code: 'X1X', config: { kind: 'percent', percentOff: 5 } }).catch((e) => e);
  expect(err).toBeInstanceOf(ConflictError);
  expect(err.code).toBe('coupon_code_taken');
  expect(seen).toHaveLength(3);
});

test('5xx is retried maxRetries times with growing waits, then thrown; each call has its own key', async () => {
  const studio = client({ maxRetries: 2 });
  for (let i = 0; i < 3; i++) queue.push({ status: 503, body: problem(503, 'service_unavailable') });
  const err = await studio.classes.cancel('cls_1').catch((e) => e);
  expect(err).toBeInstanceOf(InternalServerError);
  expect(err.status).toBe(503);
  expect(seen.map((r) => r.method)).toEqual(['DELETE', 'DELETE', 'DELETE']);
  expect(new Set(seen.map((r) => r.headers['idempotency-key'])).size).toBe(1);
  const [first, second] = gaps();
  expect(first).toBeGreaterThanOrEqual(350); // 0.5 s less up to a quarter
  expect(second).toBeGreaterThanOrEqual(700); // 1 s less up to a quarter
  await studio.classes.cancel('cls_2');
  expect(seen.at(-1)!.headers['idempotency-key']).not.toBe(seen[0]!.headers['idempotency-key']!);
});

test('a 429 without Retry-After waits for its empty RateLimit bucket; a wait of over a minute is not waited', async () => {
  const studio = client();
  queue.push({ status: 429, headers: { ratelimit: '"key";r=0;t=1' }, body: problem(429, 'rate_limited') });
  await studio.key.retrieve();
  expect(gaps()[0]).toBeGreaterThanOrEqual(950);
  queue.push({ status: 429, headers: { 'retry-after': '3600' }, body: problem(429, 'rate_limited') });
  const began = performance.now();
  expect(await studio.key.retrieve().catch((e) => e)).toBeInstanceOf(RateLimitError);
  expect(performance.now() - began).toBeLessThan(500);
});

test('a slow answer is a TimeoutError after each attempt has had its time; a 422 carries its field errors', async () => {
  const studio = client({ timeout: 100, maxRetries: 1 });
  queue.push({ status: 200, delayMs: 400 }, { status: 200, delayMs: 400 });
  const err = await studio.key.retrieve().catch((e) => e);
  expect(err).toBeInstanceOf(TimeoutError);
  expect(seen).toHaveLength(2);
  await Bun.sleep(400); // let the server's slow answers finish
  queue.length = 0;
  queue.push({
    status: 422,
    headers: { 'x-request-id': 'req_abc' },
    body: problem(422, 'validation_failed', { errors: [{ path: '/body/name', message: 'too short' }] }),
  });
  const invalid = await studio.instructors.create({ name: '' }).catch((e) => e);
  expect(invalid).toBeInstanceOf(UnprocessableEntityError);
  expect(invalid.errors).toEqual([{ path: '/body/name', message: 'too short' }]);
  expect(invalid.requestId).toBe('req_abc');
  expect(invalid.detail).toBe('validation_failed happened');
});

test("the caller's signal ends a call while it waits to retry; queries leave out what is undefined", async () => {
  const studio = client();
  queue.push({ status: 503, headers: { 'retry-after': '30' }, body: problem(503, 'service_unavailable') });
  const controller = new AbortController();
  const call = studio.key.retrieve({ signal: controller.signal });
  setTimeout(() => controller.abort(new Error('enough')), 100);
  const began = performance.now();
  expect(((await call.catch((e) => e)) as Error).message).toBe('enough');
  expect(performance.now() - began).toBeLessThan(1000);
  await studio.classes.list({ limit: 10, cursor: undefined }).then((p) => p);
  expect(new URL(seen.at(-1)!.url).search).toBe('?limit=10');
  expect(seen.at(-1)!.headers['idempotency-key']).toBeUndefined();
  expect(seen.at(-1)!.headers['user-agent']).toMatch(/^studio-sdk-typescript\/\d+\.\d+\.\d+$/);
});
