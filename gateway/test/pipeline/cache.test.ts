import { afterAll, describe, expect, test } from 'bun:test';
import { asResponse, HeldAnswer } from '../../src/answer';
import { acceptedCodings, StorefrontCache } from '../../src/cache/storefront';
import { Pool } from '../../src/forward/http1';
import { cacheStep } from '../../src/pipeline/cache';
import { routeStep } from '../../src/pipeline/route';
import { ctxOf, profiles, record } from './helpers';

let calls = 0;
const up = true;
const service = Bun.serve({
  port: 0,
  fetch(req) {
    calls++;
    if (!up) return new Response(null, { status: 502 });
    if (req.headers.get('if-none-match') === '"v1"')
      return new Response(null, { status: 304, headers: { etag: '"v1"' } });
    return Response.json({ data: [1, 2, 3] }, { headers: { etag: '"v1"', 'cache-control': 'no-cache' } });
  },
});
afterAll(() => service.stop(true));

function setup() {
  const p = profiles({ STOREFRONT_SERVICE_URL: `http://127.0.0.1:${service.port}` });
  p.cache.enabled = true;
  const cached = cacheStep(p.storefront, p.cache);
  const ctx = (path: string, headers: Record<string, string> = {}) => {
    const c = ctxOf(`http://gw${path}`, { headers });
    routeStep(p.storefront)(c);
    c.key = record({ kind: 'publishable', scopes: [] });
    return c;
  };
  return { p, cached, ctx };
}

describe('cache step', () => {
  test("a miss goes upstream once; the next read is answered synchronously with the request's own headers", async () => {
    const { cached, ctx } = setup();
    const before = calls;
    const first = await cached(ctx('/v1/instructors'), { 'x-request-id': 'req_1' })!;
    expect(first.status).toBe(200);
    expect(calls).toBe(before + 1);
    const second = cached(ctx('/v1/instructors'), { 'x-request-id': 'req_2' });
    expect(second).toBeInstanceOf(HeldAnswer); // no Promise: nothing waited on, and no Response made
    const res = asResponse(second as HeldAnswer);
    expect(res.headers.get('x-request-id')).toBe('req_2');
    expect(await res.json()).toEqual({ data: [1, 2, 3] });
    expect(calls).toBe(before + 1);
  });

  test('each Accept-Encoding has its own codings, whichever value was asked about before it', () => {
    const both = { br: true, gzip: true };
    const gzip = { br: false, gzip: true };
    const none = { br: false, gzip: false };
    for (const [value, codings] of [
      ['gzip, br', both],
      ['gzip', gzip],
      ['gzip, br', both], // seen before, not the last
      ['gzip', gzip],
      ['gzip', gzip], // the last again
      ['br;q=0, gzip', gzip],
      ['identity', none],
      [null, none],
      ['gzip, br', both],
    ] as const)
      expect(acceptedCodings(value)).toEqual(codings);
  });

  test("the client's If-None-Match gets a 304 from the kept answer", async () => {
    const { cached, ctx } = setup();
    await cached(ctx('/v1/instructors'), {});
    const res = cached(ctx('/v1/instructors', { 'if-none-match': '"v1"' }), {}) as Response;
    expect(res.status).toBe(304);
  });

  test('a cache whose broadcasts may have been missed (disabled) steps aside: null, so the call is forwarded', () => {
    const { p, cached, ctx } = setup();
    p.cache.enabled = false;
    expect(cached(ctx('/v1/instructors'), {})).toBeNull();
  });

  test('stale reads while a refresh runs are answered at once and start nothing: one fill, one upstream call', async () => {
    const { p, ctx } = setup();
    const cache = new StorefrontCache({ ttlMs: 1 });
    cache.enabled = true;
    const cached = cacheStep(p.storefront, cache);
    await cached(ctx('/v1/instructors'), {});
    await Bun.sleep(5); // past its lifetime, within the grace period
    const fill = cache.fill.bind(cache);
    let fills = 0;
    cache.fill = (...args) => (fills++, fill(...args));
    const before = calls;
    // each answered from the stale entry: a fill per read would keep each read's request until the refresh ends
    const stale = Array.from({ length: 50 }, (_, i) => cached(ctx('/v1/instructors'), { 'x-request-id': `req_${i}` }));
    for (const a of stale) expect(a).toBeInstanceOf(HeldAnswer);
    expect(fills).toBe(1);
    await Bun.sleep(50);
    expect(calls).toBe(before + 1);
    expect(cached(ctx('/v1/instructors'), {})).toBeInstanceOf(HeldAnswer); // fresh again
  });

  test("an upstream failure becomes this surface's problem answer, with the request's headers", async () => {
    const { p, ctx } = setup();
    p.storefront.forward = { ...p.storefront.forward, pool: new Pool('http://127.0.0.1:1') };
    const res = asResponse(await cacheStep(p.storefront, p.cache)(ctx('/v1/classes'), { 'x-request-id': 'req_3' })!);
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-id')).toBe('req_3');
  });
});
