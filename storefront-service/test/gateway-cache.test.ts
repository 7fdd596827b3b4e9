/** The gateway's Storefront cache on its own: keys, 304s, and no stale fill after a change. */
import { describe, expect, test } from 'bun:test';
import { HeldAnswer } from '../../gateway/src/answer';
import { StorefrontCache } from '../../gateway/src/cache/storefront';

const answer = (body: string, etag = '"v1"') =>
  new Response(body, {
    status: 200,
    headers: { etag, 'content-type': 'application/json', 'cache-control': 'public, max-age=30', vary: 'Authorization' },
  });

const read = (a: HeldAnswer | null) => a?.toResponse() ?? null;

/** A service's answer as the hop hands it to the cache: held, its body and headers as they came. */
async function held(res: Response): Promise<HeldAnswer> {
  const body = new Uint8Array(await res.arrayBuffer());
  return new HeldAnswer(res.status, res.headers.toJSON(), null, body.byteLength ? body : null);
}
type ResponseLoader = (etag: string | null) => Promise<Response>;

/**
 * The cache with its answers read as Responses: the gateway makes a Response of a held answer's bytes and headers,
 * and a test reads them back as a client would. The service's answers are written as Responses too, and handed over held.
 */
class Readable {
  readonly c: StorefrontCache;
  constructor(o: ConstructorParameters<typeof StorefrontCache>[0]) {
    this.c = new StorefrontCache(o);
  }
  get bytes() {
    return this.c.bytes;
  }
  get enabled() {
    return this.c.enabled;
  }
  set enabled(live: boolean) {
    this.c.enabled = live;
  }
  token = () => this.c.token();
  drop = (studioId: string) => this.c.drop(studioId);
  changed = (studioId: string) => this.c.changed(studioId);
  flush = () => this.c.flush();
  lookup = (...a: Parameters<StorefrontCache['lookup']>) => read(this.c.lookup(...a));
  stale = (...a: Parameters<StorefrontCache['stale']>) => read(this.c.stale(...a));
  store = async (studioId: string, key: string, token: number, res: Response, acceptEncoding?: string | null) =>
    this.c.store(studioId, key, token, await held(res), acceptEncoding).toResponse();
  fill = async (
    studioId: string,
    key: string,
    ifNoneMatch: string | null,
    acceptEncoding: string | null,
    load: ResponseLoader,
    ...rest: [extra?: Record<string, string>, onProblem?: Parameters<StorefrontCache['fill']>[6]]
  ) =>
    (
      await this.c.fill(studioId, key, ifNoneMatch, acceptEncoding, (etag) => load(etag).then(held), ...rest)
    ).toResponse();
}

function live(o: ConstructorParameters<typeof StorefrontCache>[0] = {}) {
  const c = new Readable(o);
  c.enabled = true;
  return c;
}

describe('StorefrontCache', () => {
  test('query order and encoding do not split entries; the path alone has no "?"', () => {
    expect(StorefrontCache.keyOf('/v1/classes?level=beginner&from=2026-12-01T00%3A00%3A00Z')).toBe(
      StorefrontCache.keyOf('/v1/classes?from=2026-12-01T00:00:00Z&level=beginner'),
    );
    expect(StorefrontCache.keyOf('/v1/classes?')).toBe('/v1/classes');
    expect(StorefrontCache.keyOf('/v1/classes?a=1')).not.toBe(StorefrontCache.keyOf('/v1/classes?a=2'));
  });

  test("with the operation's declared parameters, any other is left out of the key (sorted, so equal queries share an entry)", () => {
    const declared = new Set(['from', 'to', 'level']);
    expect(StorefrontCache.keyOf('/v1/classes?bust=1&to=b&from=a', declared)).toBe('/v1/classes?from=a&to=b');
    expect(StorefrontCache.keyOf('/v1/classes?from=a&to=b&bust=2', declared)).toBe('/v1/classes?from=a&to=b');
    expect(StorefrontCache.keyOf('/v1/classes?bust=1', declared)).toBe('/v1/classes');
    expect(StorefrontCache.keyOf('/v1/plans?bust=1', new Set())).toBe('/v1/plans');
    expect(StorefrontCache.keyOf('/v1/classes?from=a', declared)).not.toBe(
      StorefrontCache.keyOf('/v1/classes?from=b', declared),
    );
    // a repeated one is read by its last value, by the service and so by the key
    expect(StorefrontCache.keyOf('/v1/classes?level=a&level=b', declared)).toBe('/v1/classes?level=b');
  });

  test('thousands of undeclared parameters cost one pass over them, not one per parameter', () => {
    const declared = new Set(['from', 'to', 'level']);
    const noise = Array.from({ length: 5_000 }, (_, i) => `p${i.toString(36)}=1`).join('&');
    const t = performance.now();
    for (let i = 0; i < 10; i++)
      expect(StorefrontCache.keyOf(`/v1/classes?${noise}&level=b`, declared)).toBe('/v1/classes?level=b');
    expect((performance.now() - t) / 10).toBeLessThan(5); // ms a call; one delete per name took about 100
  });

  test('bounded in bytes, every representation counted', async () => {
    const c = live({ maxBytes: 64 * 1024 });
    // five studios (one may hold a quarter), so the whole cache's bound is the one reached
    for (let i = 0; i < 20; i++)
      await c.store(
        `std_${i % 5}`,
        `/v1/plans?i=${i}`,
        c.token(),
        answer(JSON.stringify({ plans: Array.from({ length: 500 }, (_, j) => `${i}-${j}-${Math.random()}`) })),
      );
    expect(c.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(c.bytes).toBeGreaterThan(32 * 1024);
    expect(c.lookup('std_4', '/v1/plans?i=19', null)).not.toBeNull();
    expect(c.lookup('std_0', '/v1/plans?i=0', null)).toBeNull();
  });

  test("one studio holds a quarter of the cache at most: cycling one site's query values evicts that site's answers, not another studio's", async () => {
    const c = live({ maxBytes: 64 * 1024 });
    const body = (i: number) => answer(JSON.stringify({ plans: Array.from({ length: 100 }, (_, j) => `${i}-${j}`) }));
    await c.store('std_b', '/v1/plans', c.token(), body(-1));
    for (let i = 0; i < 200; i++) await c.store('std_a', `/v1/plans?i=${i}`, c.token(), body(i));
    expect(c.lookup('std_b', '/v1/plans', null)).not.toBeNull();
    expect(c.lookup('std_a', '/v1/plans?i=199', null)).not.toBeNull();
    expect(c.bytes).toBeLessThanOrEqual(16 * 1024 + 4 * 1024); // studio a's quarter, and studio b's one answer
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

  test("each hit carries its own request's headers and no earlier one's, over the stored ones", async () => {
    const c = live();
    await c.store('std_a', '/v1/plans', c.token(), answer('{"plans":[]}'));
    const first = c.lookup('std_a', '/v1/plans', null, null, {
      'x-request-id': 'req_1',
      'cache-control': 'no-store',
      'access-control-allow-origin': 'https://lotus.example',
    })!;
    const second = c.lookup('std_a', '/v1/plans', null, null, { 'x-request-id': 'req_2' })!;
    const third = c.lookup('std_a', '/v1/plans', null)!;
    // the first answer keeps what it was made with
    expect(first.headers.get('x-request-id')).toBe('req_1');
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('access-control-allow-origin')).toBe('https://lotus.example');
    // the second has its own id; a name only the first had is gone, or back to the stored value
    expect(second.headers.get('x-request-id')).toBe('req_2');
    expect(second.headers.get('cache-control')).toBe('public, max-age=30');
    expect(second.headers.has('access-control-allow-origin')).toBe(false);
    expect(third.headers.has('x-request-id')).toBe(false);
    expect(third.headers.get('etag')).toBe('"v1"');
    // as many names as the answer before, not the same ones: the one only that answer had is gone
    const fourth = c.lookup('std_a', '/v1/plans', null, null, {
      'x-request-id': 'req_4',
      'cache-control': 'no-store',
    })!;
    const fifth = c.lookup('std_a', '/v1/plans', null, null, { 'x-request-id': 'req_5', 'retry-after': '1' })!;
    expect(fourth.headers.get('cache-control')).toBe('no-store');
    expect([fifth.headers.get('cache-control'), fifth.headers.get('retry-after')]).toEqual(['public, max-age=30', '1']);
  });

  test('a header the answer before set to the same value is kept; one it set to another value is replaced', async () => {
    const c = live();
    await c.store('std_a', '/v1/plans', c.token(), answer('{"plans":[]}'));
    const own = (id: string, origin: string) => ({ 'x-request-id': id, 'access-control-allow-origin': origin });
    const hits = [
      c.lookup('std_a', '/v1/plans', null, null, own('req_1', '*'))!,
      c.lookup('std_a', '/v1/plans', null, null, own('req_2', '*'))!,
      c.lookup('std_a', '/v1/plans', null, null, own('req_3', 'https://lotus.example'))!,
      c.lookup('std_a', '/v1/plans', null, null, own('req_4', 'https://lotus.example'))!,
      c.lookup('std_a', '/v1/plans', null, null, own('req_5', '*'))!,
    ];
    expect(hits.map((h) => [h.headers.get('x-request-id'), h.headers.get('access-control-allow-origin')])).toEqual([
      ['req_1', '*'],
      ['req_2', '*'],
      ['req_3', 'https://lotus.example'],
      ['req_4', 'https://lotus.example'],
      ['req_5', '*'],
    ]);
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

  test('the waiters of one upstream problem answer each get their own request id in its instance', async () => {
    const c = live();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const load = async () => {
      calls++;
      await gate;
      const body = {
        title: 'Site not published',
        status: 404,
        code: 'site_not_published',
        instance: 'urn:request:req_a',
      };
      return new Response(JSON.stringify(body), {
        status: 404,
        headers: { 'content-type': 'application/problem+json' },
      });
    };
    const a = c.fill('std_a', '/v1/site', null, null, load, { 'x-request-id': 'req_a' });
    const b = c.fill('std_a', '/v1/site', null, null, load, { 'x-request-id': 'req_b' });
    release();
    const [ra, rb] = await Promise.all([a, b]);
    expect(calls).toBe(1);
    expect([ra.status, rb.status]).toEqual([404, 404]);
    expect((await ra.json()).instance).toBe('urn:request:req_a');
    const own = await rb.json();
    expect(own).toMatchObject({ code: 'site_not_published', instance: 'urn:request:req_b' });
    expect(rb.headers.get('x-request-id')).toBe('req_b');
    expect(rb.headers.get('content-type')).toBe('application/problem+json');
  });

  test('a 200 too large to keep is not kept, and its ETag still gives a matching If-None-Match 304', async () => {
    const c = live({ maxBodyBytes: 64 });
    const big = () => answer(JSON.stringify({ instructors: 'x'.repeat(200) }), '"big"');
    const first = await c.fill('std_a', '/v1/instructors', null, null, async () => big());
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBe('"big"');
    expect(c.lookup('std_a', '/v1/instructors', null)).toBeNull(); // asked upstream each time
    const again = await c.fill('std_a', '/v1/instructors', '"big"', null, async () => big());
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await c.fill('std_a', '/v1/instructors', '"other"', null, async () => big())).status).toBe(200);
  });
});

describe('StorefrontCache under load', () => {
  test('concurrent misses of one entry make one upstream call; each caller gets its own answer', async () => {
    const c = live();
    let calls = 0;
    const load = async () => {
      calls++;
      await Bun.sleep(20);
      return answer('{"plans":["x"]}');
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => c.fill('std_a', '/v1/plans', i === 0 ? '"v1"' : null, null, load)),
    );
    expect(calls).toBe(1);
    expect(answers[0]!.status).toBe(304);
    for (const a of answers.slice(1)) expect(await a.text()).toBe('{"plans":["x"]}');
    // a non-cacheable answer is shared by the waiters of its flight, then asked again
    const missing = async () => (calls++, new Response('{"code":"site_not_published"}', { status: 404 }));
    const site = await Promise.all([
      c.fill('std_a', '/v1/site', null, null, missing),
      c.fill('std_a', '/v1/site', null, null, missing),
    ]);
    expect(site.map((r) => r.status)).toEqual([404, 404]);
    expect(calls).toBe(2);
    await c.fill('std_a', '/v1/site', null, null, missing);
    expect(calls).toBe(3);
  });
  test('a refresh revalidates: upstream is asked with the kept ETag, and a 304 renews the entry as it is', async () => {
    const c = live({ ttlMs: 1 });
    const asked: (string | null)[] = [];
    const first = await c.fill(
      'std_a',
      '/v1/plans',
      null,
      'gzip',
      async (etag) => (asked.push(etag), answer('{"plans":[1]}'.padEnd(2000))),
    );
    expect(first.headers.get('content-encoding')).toBe('gzip');
    await Bun.sleep(5);
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull(); // expired
    const notModified = async (etag: string | null) => (
      asked.push(etag), etag ? new Response(null, { status: 304, headers: { etag } }) : answer('{"plans":[2]}')
    );
    const renewed = await c.fill('std_a', '/v1/plans', null, null, notModified);
    expect(asked).toEqual([null, '"v1"']);
    expect((await renewed.text()).trim()).toBe('{"plans":[1]}');
    expect(renewed.status).toBe(200);

    // a write lands while the 304 is on its way: the kept bytes are not trusted, the answer is fetched in full
    await Bun.sleep(5);
    const racing = async (etag: string | null) => {
      asked.push(etag);
      if (etag) c.drop('std_a');
      return etag ? new Response(null, { status: 304, headers: { etag } }) : answer('{"plans":[2]}', '"v2"');
    };
    expect(await (await c.fill('std_a', '/v1/plans', null, null, racing)).text()).toBe('{"plans":[2]}');
    expect(asked.slice(2)).toEqual(['"v1"', null]);
  });

  test('an expired entry is served while it refreshes; a dropped one never is', async () => {
    const c = live({ ttlMs: 1 });
    await c.store('std_a', '/v1/plans', c.token(), answer('old'));
    await Bun.sleep(5);
    expect(c.lookup('std_a', '/v1/plans', null)).toBeNull();
    expect(await c.stale('std_a', '/v1/plans', null, null)!.text()).toBe('old');
    c.drop('std_a');
    expect(c.stale('std_a', '/v1/plans', null, null)).toBeNull();
  });
});
