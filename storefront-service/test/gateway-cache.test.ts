/** The gateway's Storefront cache on its own: keys, 304s, and no stale fill after a change. */
import { describe, expect, test } from 'bun:test';
import { StorefrontCache } from '@studio/gateway/forward/storefront-cache';

const answer = (body: string, etag = '"v1"') =>
  new Response(body, { status: 200, headers: { etag, 'content-type': 'application/json', 'cache-control': 'public, max-age=30', vary: 'Authorization' } });

function live(o: ConstructorParameters<typeof StorefrontCache>[0] = {}) {
  const c = new StorefrontCache(o);
  c.enabled = true;
  return c;
}

describe('StorefrontCache', () => {
  test('query order and encoding do not split entries; the path alone has no "?"', () => {
    expect(StorefrontCache.keyOf('/v1/classes?level=beginner&from=2026-12-01T00%3A00%3A00Z')).toBe(StorefrontCache.keyOf('/v1/classes?from=2026-12-01T00:00:00Z&level=beginner'));
    expect(StorefrontCache.keyOf('/v1/classes?')).toBe('/v1/classes');
    expect(StorefrontCache.keyOf('/v1/classes?a=1')).not.toBe(StorefrontCache.keyOf('/v1/classes?a=2'));
  });

  test('a stored answer is served per studio, with 304 on its ETag', async () => {
    const c = live();
    const sent = await c.store('std_a', '/v1/plans', c.token(), answer('{"plans":[]}'));
    expect(await sent.text()).toBe('{"plans":[]}');
    const hit = c.lookup('std_a', '/v1/plans', null)!;
    expect(hit.status).toBe(200);
    expect(await hit.text()).toBe('{"plans":[]}');
    expect(await c.lookup('std_a', '/v1/plans', null)!.text()).toBe('{"plans":[]}'); // the body is reusable
    expect(c.lookup('std_a', '/v1/plans', '"v1"')!.status).toBe(304);
    expect(c.lookup('std_b', '/v1/plans', null)).toBeNull();
  });

  test('a change after the upstream call started refuses the fill (no pre-write data parked)', async () => {
    const c = live();
    const token = c.token();
    c.drop('std_a'); // a Management write lands while the read is in flight
    await c.store('std_a', '/v1/plans', token, answer('old'));
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull();
    const t2 = c.token();
    c.drop('std_other');
    await c.store('std_a', '/v1/plans', t2, answer('new'));
    expect(await c.lookup('std_a', '/v1/plans', null)!.text()).toBe('new');
  });

  test('drop, flush, expiry and a down subscription all stop serving', async () => {
    const c = live({ ttlMs: 30 });
    await c.store('std_a', '/v1/plans', c.token(), answer('x'));
    c.drop('std_a');
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull();
    await c.store('std_a', '/v1/plans', c.token(), answer('x'));
    c.flush();
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull();
    await c.store('std_a', '/v1/plans', c.token(), answer('x'));
    c.enabled = false;
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull();
    c.enabled = true;
    await Bun.sleep(40);
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull();
  });

  test('only 200s with an ETag are kept; a Management write publishes the change', async () => {
    const published: string[] = [];
    const c = live({ publish: async (id) => void published.push(id) });
    await c.store('std_a', '/v1/site', c.token(), new Response('{}', { status: 404, headers: { etag: '"x"' } }));
    await c.store('std_a', '/v1/plans', c.token(), new Response('{}', { status: 200 }));
    expect(c.lookup('std_a', '/v1/site', null)).toBeNull();
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull();
    await c.store('std_a', '/v1/plans', c.token(), answer('x'));
    await c.changed('std_a');
    expect(published).toEqual(['std_a']);
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull();
  });
});
