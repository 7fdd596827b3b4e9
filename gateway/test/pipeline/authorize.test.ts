import { describe, expect, test } from 'bun:test';
import { asResponse } from '../../src/answer';
import { authorizeStep, judgeKey } from '../../src/pipeline/authorize';
import { routeStep } from '../../src/pipeline/route';
import { ctxOf, problemOf, profiles, record } from './helpers';

const p = profiles();
const authorize = authorizeStep(p.management);
const route = routeStep(p.management);
const routed = (path: string, method = 'GET') => {
  const c = ctxOf(`http://gw${path}`, { method });
  route(c);
  return c;
};

describe('authorize step', () => {
  test('judgeKey: unknown, revoked, expired at its instant, wrong kind, usable', () => {
    const now = 1_700_000_000_000;
    expect(judgeKey(null, 'secret', now)).toBe('api_key_invalid');
    expect(judgeKey(record({ revoked: true }), 'secret', now)).toBe('api_key_revoked');
    expect(judgeKey(record({ expiresAt: now }), 'secret', now)).toBe('api_key_expired');
    expect(judgeKey(record({ expiresAt: now + 1 }), 'secret', now)).toBeNull();
    expect(judgeKey(record({ kind: 'publishable' }), 'secret', now)).toBe('api_key_wrong_kind');
    expect(judgeKey(record(), 'secret', now)).toBeNull();
  });

  test('the route is judged first, then the key, then the studio, then the scope', async () => {
    const unknown = routed('/v1/nothing');
    expect((await problemOf(authorize(unknown, { rec: record() })!)).code).toBe('route_not_found');
    expect(unknown.key?.id).toBe('key_unit'); // kept: the studio still sees the call

    const put = routed('/v1/classes', 'PUT');
    const res = authorize(put, { problem: 'api_key_missing' })!;
    expect(asResponse(res).headers.get('allow')).toBe('GET, POST');
    expect((await problemOf(res)).code).toBe('method_not_allowed');

    const missing = routed('/v1/classes');
    const body = await problemOf(authorize(missing, { problem: 'api_key_missing' })!);
    expect(body.code).toBe('api_key_missing');
    expect(body.detail).toContain('secret key');
    expect(body.type).toBe('https://errors.test/#api_key_missing');
    expect(missing.problem).toBe('api_key_missing');

    expect((await problemOf(authorize(routed('/v1/classes'), { rec: record({ studioLive: false }) })!)).code).toBe(
      'studio_required',
    );
    const noScope = await problemOf(authorize(routed('/v1/classes', 'POST'), { rec: record() })!);
    expect(noScope.code).toBe('scope_required');
    expect(noScope.requiredScope).toBe('classes:write');
  });

  test('the events operations take any one read scope: "*:read" when the key holds none', async () => {
    for (const path of ['/v1/events', '/v1/events/evt_x']) {
      expect(authorize(routed(path), { rec: record({ scopes: ['coupons:read'] }) })).toBeNull();
      const refused = await problemOf(
        authorize(routed(path), { rec: record({ scopes: ['classes:write', 'coupons:write'] }) })!,
      );
      expect(refused.code).toBe('scope_required');
      expect(refused.requiredScope).toBe('*:read');
      expect(refused.detail).toContain('any one read scope');
    }
  });

  test('a usable key with the scope passes, and is on the context', () => {
    const c = routed('/v1/classes');
    expect(authorize(c, { rec: record() })).toBeNull();
    expect(c.key?.studioId).toBe('std_unit');
    expect(c.problem).toBeUndefined();
  });
});
