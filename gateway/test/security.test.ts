/**
 * The common security test: every operation of the table, every
 * way a key can be wrong, answered by the gateway before any service sees it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ensureDefaultSandbox } from '@studio/management-service/sandboxes';
import { ANY_READ, generateKey, OPERATIONS, type Operation, SCOPES, type Scope, scopesOfMode } from '@studio/shared';
import { expectProblem, type Stack, startStack } from '../../test/harness';

let s: Stack;
let studioA: { id: string };
const k = {} as Record<'pk' | 'sk' | 'skNone' | 'pkRevoked' | 'skRevoked' | 'testSk' | 'testSkNone', string>;
/** studioA's default sandbox (test mode): a test-only operation's keys are its. */
let sandboxA: { id: string };

beforeAll(async () => {
  s = await startStack();
  studioA = await s.studio();
  k.pk = (await s.key(studioA.id, 'publishable')).key;
  k.sk = (await s.key(studioA.id, 'secret', SCOPES)).key;
  k.skNone = (await s.key(studioA.id, 'secret', [])).key;
  const pkr = await s.key(studioA.id, 'publishable');
  const skr = await s.key(studioA.id, 'secret', SCOPES);
  await s.revoke(pkr.id);
  await s.revoke(skr.id);
  k.pkRevoked = pkr.key;
  k.skRevoked = skr.key;
  sandboxA = (await ensureDefaultSandbox(s.sql, studioA.id)).sandbox;
  k.testSk = (await s.key(sandboxA.id, 'secret', scopesOfMode('test'))).key;
  k.testSkNone = (await s.key(sandboxA.id, 'secret', [])).key;
});
afterAll(() => s.close());

const concrete = (op: Operation) =>
  op.path.replace(/\{(\w+)\}/g, (_, name: string) => `${name.replace(/Id$/, '')}_doesnotexist`);
const call = (op: Operation, key: string | null, headers: Record<string, string> = {}) => {
  const init: RequestInit = { method: op.method, headers: { 'idempotency-key': crypto.randomUUID(), ...headers } };
  if (op.method !== 'GET' && op.method !== 'DELETE') {
    init.body = '{}';
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  return op.surface === 'storefront' ? s.sf(concrete(op), key, init) : s.mg(concrete(op), key, init);
};

describe.each(OPERATIONS.map((op) => [`${op.method} ${op.path} (${op.id})`, op] as const))('%s', (_name, op) => {
  // a test-only operation (the sandbox reset) is a test key's: its scopes are judged among a test key's
  const testOnly = 'testOnly' in op;
  const own = () => (op.surface === 'storefront' ? k.pk : testOnly ? k.testSk : k.sk);
  const scopeHolder = () => (testOnly ? sandboxA : studioA);
  const allScopes: readonly Scope[] = testOnly ? scopesOfMode('test') : SCOPES;
  const other = () => (op.surface === 'storefront' ? k.sk : k.pk);
  const revoked = () => (op.surface === 'storefront' ? k.pkRevoked : k.skRevoked);
  const prefix = op.surface === 'storefront' ? 'svc_pk_' : 'svc_sk_';

  test('no key -> 401 api_key_missing', async () => {
    await expectProblem(await call(op, null), 401, 'api_key_missing');
  });
  test('malformed key -> 401 api_key_invalid', async () => {
    await expectProblem(await call(op, `${prefix}not-a-real-key`), 401, 'api_key_invalid');
    // right length and alphabet, wrong checksum: refused without a lookup
    const good = own();
    const flipped = good.slice(0, 10) + (good[10] === 'a' ? 'b' : 'a') + good.slice(11);
    await expectProblem(await call(op, flipped), 401, 'api_key_invalid');
    await expectProblem(await call(op, null, { authorization: `Basic ${btoa('x:y')}` }), 401, 'api_key_invalid');
  });
  test('unknown key with a valid checksum -> 401 api_key_invalid', async () => {
    await expectProblem(
      await call(op, generateKey(op.surface === 'storefront' ? 'publishable' : 'secret')),
      401,
      'api_key_invalid',
    );
  });
  test('revoked key -> 401 api_key_revoked', async () => {
    await expectProblem(await call(op, revoked()), 401, 'api_key_revoked');
  });
  test("the other kind's key -> 401 api_key_wrong_kind", async () => {
    await expectProblem(await call(op, other()), 401, 'api_key_wrong_kind');
  });
  if (op.scope) {
    test(`secret key without ${op.scope} -> 403 scope_required`, async () => {
      const body = await expectProblem(await call(op, testOnly ? k.testSkNone : k.skNone), 403, 'scope_required');
      expect(body.requiredScope).toBe(op.scope);
    });
    test(
      op.scope === ANY_READ
        ? 'a key holding every write scope and no read scope -> 403'
        : 'a key holding every scope but this one -> 403',
      async () => {
        // "*:read" (the events operations): any one read scope would do, so the nearest miss holds none
        const almost = (
          await s.key(
            scopeHolder().id,
            'secret',
            allScopes.filter((x) => (op.scope === ANY_READ ? !x.endsWith(':read') : x !== op.scope)),
          )
        ).key;
        await expectProblem(await call(op, almost), 403, 'scope_required');
      },
    );
    if (op.scope === ANY_READ) {
      test('any single read scope passes the gateway', async () => {
        for (const scope of SCOPES.filter((x) => x.endsWith(':read'))) {
          const res = await call(op, (await s.key(studioA.id, 'secret', [scope])).key);
          expect({ scope, status: res.status }).not.toMatchObject({ status: 403 });
        }
      });
    }
  }
  if (testOnly)
    test('a live key holding every scope -> 403 test_mode_required, before its scopes are judged', async () => {
      const body = await expectProblem(await call(op, k.sk), 403, 'test_mode_required');
      expect(body.detail).toContain('svc_sk_test_');
    });
  test('the right key passes the gateway (no 401/403 from it)', async () => {
    const res = await call(op, own());
    expect([401, 403]).not.toContain(res.status);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('a key pasted into the URL', () => {
  test('is never kept: the activity entry has it redacted in its path, query and detail', async () => {
    const inQuery = await s.mg(`/v1/instructors?api_key=${k.sk}`, k.sk);
    const inPath = await s.mg(`/v1/${k.sk}`, k.sk);
    const ids = [inQuery.headers.get('x-request-id'), inPath.headers.get('x-request-id')];
    await expectProblem(inPath, 404, 'route_not_found');
    await s.gateway.activity.flush();
    const rows = await s.sql<{ path: string; query: string | null; problemDetail: string | null }[]>`
      select path, query, problem_detail from activity where studio_id = ${studioA.id} and request_id = any(${ids})`;
    expect(rows).toHaveLength(2);
    const kept = JSON.stringify(rows);
    expect(kept).not.toContain(k.sk.slice(7));
    expect(kept).toContain('api_key=svc_sk_[redacted]');
    expect(kept).toContain('/v1/svc_sk_[redacted]');
  });
});

describe('route and method', () => {
  test('unknown path -> 404 route_not_found, checked before the key', async () => {
    await expectProblem(await s.mg('/v1/nope', null), 404, 'route_not_found');
    await expectProblem(await s.sf('/v1/classes/extra', k.pk), 404, 'route_not_found');
  });
  test('known path, wrong method -> 405 with Allow, checked before the key', async () => {
    const res = await s.mg('/v1/classes/cls_x', null, { method: 'POST' });
    expect(res.headers.get('allow')).toBe('GET, PATCH, DELETE');
    await expectProblem(res, 405, 'method_not_allowed');
  });
  test('HEAD is GET without the body: the same status and headers, Content-Length included, on both surfaces', async () => {
    for (const [call, path, key] of [
      [s.sf, '/v1/classes', k.pk],
      [s.sf, '/v1/classes', k.pk], // the gateway's cached answer this time
      [s.mg, '/v1/instructors', k.sk],
    ] as const) {
      const get = await call(path, key);
      const getBody = await get.arrayBuffer();
      const head = await call(path, key, { method: 'HEAD' });
      expect([head.status, await head.text()]).toEqual([200, '']);
      expect(head.headers.get('content-length')).toBe(String(getBody.byteLength));
      for (const h of ['content-type', 'etag', 'cache-control', 'vary', 'x-content-type-options'])
        expect([h, head.headers.get(h)]).toEqual([h, get.headers.get(h)]);
    }
    // a path without a GET: HEAD is 405 like any other method it does not take
    const res = await s.mg('/v1/members/invites', k.sk, { method: 'HEAD' });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'POST']);
  });
  test('any write on the Storefront surface -> 405 problem+json', async () => {
    for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) {
      const res = await s.sf('/v1/classes', k.pk, {
        method,
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.headers.get('allow')).toBe('GET');
      await expectProblem(res, 405, 'method_not_allowed');
    }
  });
  test('problem bodies carry the request id in instance and a type URI', async () => {
    const res = await s.mg('/v1/classes', null);
    const id = res.headers.get('x-request-id');
    const body = await expectProblem(res, 401, 'api_key_missing');
    expect(body.instance).toBe(`urn:request:${id}`);
    expect(String(body.type)).toBe(`${s.managementUrl}/docs/problems#api_key_missing`);
    expect(body.title).toBeString();
    expect(body.detail).toBeString();
  });
});

describe('studio and kind rules', () => {
  test("a deleted studio's keys answer 403 studio_required", async () => {
    const st = await s.studio();
    const sk = (await s.key(st.id, 'secret', ['instructors:read'])).key;
    const pk = (await s.key(st.id, 'publishable')).key;
    expect((await s.mg('/v1/instructors', sk)).status).toBe(200);
    await s.deleteStudio(st.id);
    await expectProblem(await s.mg('/v1/instructors', sk), 403, 'studio_required');
    await expectProblem(await s.sf('/v1/instructors', pk), 403, 'studio_required');
  });
  test('CORS on the Storefront only', async () => {
    const pre = await fetch(`${s.storefrontUrl}/v1/classes`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://lotus.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toContain('Authorization');
    // a page traced in the browser sends traceparent: allowed, and the trace it joined readable back
    expect(pre.headers.get('access-control-allow-headers')).toContain('traceparent, tracestate');
    expect(pre.headers.get('access-control-expose-headers')).toContain('traceresponse');
    const res = await s.sf('/v1/instructors', k.pk, { headers: { origin: 'https://lotus.example' } });
    expect(res.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    const mg = await s.mg('/v1/instructors', k.sk, { headers: { origin: 'https://lotus.example' } });
    expect(mg.headers.get('access-control-allow-origin')).toBeNull();
  });
});
