import { afterAll, describe, expect, test } from 'bun:test';
import { verifySignature } from '@studio/shared';
import { asResponse } from '../../src/answer';
import { StorefrontCache } from '../../src/cache/storefront';
import { problemOf as answeredProblem } from '../../src/forward/proxy';
import type { Ctx } from '../../src/pipeline/context';
import { bodyTooLarge, forwardStep } from '../../src/pipeline/forward';
import { routeStep } from '../../src/pipeline/route';
import { ctxOf, problemOf, profiles, record } from './helpers';

/** A stand-in service on a real port: echoes what the gateway told it, answers slowly on /slow. */
const seen: { caller: ReturnType<typeof verifySignature>; body: string; headers: Headers }[] = [];
const service = Bun.serve({
  port: 0,
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname.endsWith('/slow')) await Bun.sleep(500);
    seen.push({
      caller: verifySignature('unit-test-gateway-secret', req.method, url.pathname + url.search, req.headers),
      body: await req.text(),
      headers: req.headers,
    });
    return Response.json(
      { ok: true },
      { status: req.method === 'POST' ? 201 : 200, headers: { 'x-gw-leak': 'no', etag: '"e1"' } },
    );
  },
});
afterAll(() => service.stop(true));

const env = { MANAGEMENT_SERVICE_URL: `http://127.0.0.1:${service.port}`, UPSTREAM_TIMEOUT_MS: '200' };

function authorized(p: ReturnType<typeof profiles>['management'], path: string, init: RequestInit = {}): Ctx {
  const c = ctxOf(`http://gw${path}`, init);
  routeStep(p)(c);
  c.key = record({ scopes: ['classes:read', 'classes:write'] });
  return c;
}

describe('forward step', () => {
  test('the service gets a signed caller and the body; caller-sent x-gw-* and Authorization never cross; none come back', async () => {
    const p = profiles(env);
    const c = authorized(p.management, '/v1/classes?limit=2', {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json', authorization: 'Bearer svc_sk_x', 'x-gw-studio': 'std_forged' },
    });
    const res = asResponse(await forwardStep(p.management)(c, { 'x-request-id': c.requestId }));
    expect(res.headers.get('x-request-id')).toBe(c.requestId); // the gateway's, built in
    expect(res.status).toBe(201);
    expect(res.headers.get('x-gw-leak')).toBeNull();
    const last = seen.at(-1)!;
    expect(last.caller).toMatchObject({
      studioId: 'std_unit',
      keyId: 'key_unit',
      operationId: 'managementCreateClass',
      requestId: c.requestId,
    });
    expect(last.body).toBe('{"a":1}');
    expect(last.headers.get('authorization')).toBeNull();
  });

  test("a successful write to what the Storefront shows drops the studio's cached Storefront answers; a read or another write does not", async () => {
    const p = profiles(env);
    const dropped: string[] = [];
    p.management.invalidates = Object.assign(new StorefrontCache(), {
      changed: async (s: string) => void dropped.push(s),
    });
    await forwardStep(p.management)(authorized(p.management, '/v1/classes'), {});
    expect(dropped).toEqual([]);
    await forwardStep(p.management)(authorized(p.management, '/v1/classes', { method: 'POST', body: '{}' }), {});
    expect(dropped).toEqual(['std_unit']);
    await forwardStep(p.management)(
      authorized(p.management, '/v1/members/invites', { method: 'POST', body: '{}' }),
      {},
    );
    expect(dropped).toEqual(['std_unit']);
  });

  test('a service that does not answer in time is 504 upstream_timeout; one that is away is 503', async () => {
    const p = profiles(env);
    const slow = authorized(p.management, '/v1/classes/cls_1/slow');
    slow.op = authorized(p.management, '/v1/classes').op; // not a route of the table: named as one, so the call is signed
    expect((await problemOf(asResponse(await forwardStep(p.management)(slow, {})))).code).toBe('upstream_timeout');
    const away = profiles({ MANAGEMENT_SERVICE_URL: 'http://127.0.0.1:1' });
    const res = asResponse(
      await forwardStep(away.management)(authorized(away.management, '/v1/classes'), { 'x-request-id': 'req_x' }),
    );
    expect(res.headers.get('x-request-id')).toBe('req_x');
    expect(res.status).toBe(503);
    expect((await problemOf(res)).code).toBe('service_unavailable');
  });

  test('a declared body over 1 MiB is refused before anything is sent', async () => {
    const p = profiles(env);
    const c = authorized(p.management, '/v1/classes', {
      method: 'POST',
      headers: { 'content-length': String(2 * 1024 * 1024) },
    });
    expect((await problemOf(bodyTooLarge(p.management, c)!)).code).toBe('payload_too_large');
    expect(
      bodyTooLarge(p.management, authorized(p.management, '/v1/classes', { method: 'POST', body: '{}' })),
    ).toBeNull();
  });
});

test("a service's problem answer gives the activity entry its code and detail (without NUL, which Postgres's text refuses); any other body gives nothing", () => {
  const bytes = (o: unknown) => new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o));
  expect(answeredProblem(bytes({ code: 'invalid_cursor', detail: 'bad\u0000 cursor' }))).toEqual({
    code: 'invalid_cursor',
    detail: 'bad cursor',
  });
  expect(answeredProblem(bytes({ code: 'not_found' }))).toEqual({ code: 'not_found', detail: null });
  expect(answeredProblem(bytes({ code: 'Not A Code', detail: 'x' }))).toBeNull();
  expect(answeredProblem(bytes('<html>502</html>'))).toBeNull();
});
