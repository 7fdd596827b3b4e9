/**
 * docs/design/hostile-callers.md: nobody can flood a studio's activity log or the key store. Refused calls
 * with a known key spend the same tokens as admitted ones, a flood of 429s adds about one
 * entry a second, path and query are cut at 512 characters, unknown keys are limited per
 * client address (IPv6 per /64) before any lookup, and a flood of them cannot evict a
 * live key from memory. Through the gateway, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createApiKey } from '@studio/control';
import { generateKey, hashKey } from '@studio/shared';
import { quitRedis } from '@studio/shared/io';
import { get, signIn } from '../../dashboard/test/dashboard-helpers';
import { expectProblem, type Stack, serveSurface, startStack } from '../../test/harness';
import { needs } from '../../test/needs';
import { createGateway, type Gateway } from '../src/app';
import { clientBlock } from '../src/limits/rate-limiter';

let s: Stack;
beforeAll(async () => {
  s = await startStack({
    env: {
      RATE_LIMIT_SECRET: '2:5',
      RATE_LIMIT_PUBLISHABLE_CLIENT: '2:5',
      RATE_LIMIT_PUBLISHABLE: '1000:2000',
      RATE_LIMIT_UNKNOWN_KEY: '2:10',
      TRUSTED_PROXIES: '127.0.0.1',
    },
  });
});
afterAll(() => s.close());

type Row = {
  status: number;
  refusedCount: number | null;
  at: Date;
  path: string;
  query: string | null;
  problemCode: string | null;
  requestId: string;
};
const rowsOf = (keyId: string) =>
  s.sql<Row[]>`
    select status, refused_count, at, path, query, problem_code, request_id from activity where key_id = ${keyId} order by at, id`;

/** Entries of 429s are written once their second is over (and a quarter of a second more): wait for it, then flush. */
async function flushAll() {
  await Bun.sleep(1_300 - (Date.now() % 1000));
  await s.gateway.activity.flush();
}

const statusesOf = async (n: number, call: () => Promise<Response>) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await call();
    await r.arrayBuffer();
    out.push(r.status);
  }
  return out;
};

describe('refused calls spend tokens', () => {
  test("404, 405, 403 (origin), 401 wrong kind and 401 revoked: over the key's limit each becomes 429", async () => {
    const st = await s.studio();
    const pk = (await s.key(st.id, 'publishable')).key;
    const pk2 = (await s.key(st.id, 'publishable')).key;
    const restricted = (
      await createApiKey(s.sql, {
        studioId: st.id,
        kind: 'publishable',
        name: 'site',
        allowedOrigins: ['https://lotus.example'],
      })
    ).key;
    const sk = (await s.key(st.id, 'secret', ['classes:read'])).key;
    const revoked = await s.key(st.id, 'secret', ['classes:read']);
    await s.revoke(revoked.id);
    const cases: [string, () => Promise<Response>, number][] = [
      ['404', () => s.sf('/v1/nothing-here', pk), 404],
      ['405', () => s.sf('/v1/classes', pk2, { method: 'DELETE' }), 405],
      ['403 origin', () => s.sf('/v1/classes', restricted, { headers: { origin: 'https://copycat.example' } }), 403],
      ['401 wrong kind', () => s.sf('/v1/classes', sk), 401],
      ['401 revoked', () => s.mg('/v1/classes', revoked.key), 401],
    ];
    for (const [name, call, status] of cases) {
      const statuses = await statusesOf(12, call);
      // a burst of 5, then about 2 a second: most of the 12 are refused as rate limited
      expect({ name, first: statuses.slice(0, 5) }).toEqual({ name, first: Array(5).fill(status) });
      expect({
        name,
        limited: statuses.filter((x) => x === 429).length >= 5,
        others: statuses.filter((x) => x !== status && x !== 429),
      }).toEqual({ name, limited: true, others: [] });
      // the 429 is the rate limit's problem, with Retry-After and the key's RateLimit fields
      const last = await call();
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(last.headers.get('ratelimit-policy')).toBe(
        name.startsWith('401') ? '"key";q=2;w=1' : '"client";q=2;w=1, "key";q=1000;w=1',
      );
      await expectProblem(last, 429, 'rate_limited');
    }
  });

  test('a flood of 404s with a copied publishable key adds about one entry a second, which counts the refused', async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'publishable');
    const started = Date.now();
    const counts = new Map<number, number>();
    // four clients behind one address for 2.5 s
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (Date.now() - started < 2_500) {
          const r = await s.sf(`/v1/nope?n=${Math.random()}`, key);
          await r.arrayBuffer();
          counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const notFound = counts.get(404) ?? 0;
    const limited = counts.get(429) ?? 0;
    expect([...counts.keys()].sort()).toEqual([404, 429]);
    expect(notFound).toBeLessThanOrEqual(5 + Math.ceil(2 * seconds));
    expect(limited).toBeGreaterThan(50);
    await flushAll();
    const rows = await rowsOf(id);
    const folded = rows.filter((r) => r.status === 429);
    expect(rows.filter((r) => r.status === 404)).toHaveLength(notFound);
    // at most one entry per second (and address), together counting every 429 answered
    expect(folded.length).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect(new Set(folded.map((r) => Math.floor(r.at.getTime() / 1000))).size).toBe(folded.length);
    expect(folded.reduce((n, r) => n + r.refusedCount!, 0)).toBe(limited);
    expect(rows.filter((r) => r.status !== 429).every((r) => r.refusedCount === null)).toBe(true);
    expect(folded.every((r) => r.problemCode === 'rate_limited')).toBe(true);
    // the dashboard's entry says how many it stands for
    const { cookie } = await signIn(s, st.id);
    const page = await (await get(s, `/activity/${folded[0]!.requestId}`, cookie)).text();
    expect(page).toContain(`${folded[0]!.refusedCount} in this second from this key and address (IPv6: its /64;`);
    // and so does its row in the list
    const list = await (await get(s, '/activity?outcome=client_error', cookie)).text();
    expect(list).toContain(`×${folded[0]!.refusedCount}</span>`);
  });

  test('429s of one second from two addresses are two entries', async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'publishable');
    await Bun.sleep(1_000 - (Date.now() % 1000)); // all within one second
    const from = (address: string) =>
      statusesOf(9, () => s.sf('/v1/plans', key, { headers: { 'x-forwarded-for': address } }));
    const [a, b] = await Promise.all([from('198.51.100.1'), from('198.51.100.2')]);
    expect(a.filter((x) => x === 429).length).toBeGreaterThan(0);
    expect(b.filter((x) => x === 429).length).toBeGreaterThan(0);
    await flushAll();
    const folded = (await rowsOf(id)).filter((r) => r.status === 429);
    expect(folded).toHaveLength(2);
    expect(folded.map((r) => r.refusedCount).sort()).toEqual(
      [a.filter((x) => x === 429).length, b.filter((x) => x === 429).length].sort(),
    );
  });
  test("a proxy that appends the caller's port names one visitor, whatever the port: no fresh limit per connection", async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'publishable');
    let port = 40_000;
    const statuses = await statusesOf(12, () =>
      s.sf('/v1/plans', key, { headers: { 'x-forwarded-for': `192.0.2.77:${++port}` } }),
    );
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThanOrEqual(6); // one visitor's burst (5)
    const v6 = await statusesOf(12, () =>
      s.sf('/v1/plans', key, { headers: { 'x-forwarded-for': `[2001:db8:cc:1::1]:${++port}` } }),
    );
    expect(v6.filter((x) => x === 429).length).toBeGreaterThanOrEqual(6);
  });
  test("a publishable key's IPv6 visitors are limited per /64 (a fresh address is no fresh limit), their 429s folded per /64", async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'publishable');
    await Bun.sleep(1_000 - (Date.now() % 1000)); // all within one second
    let n = 0;
    // twelve addresses of one /64, one call each: one visitor's bucket (burst 5)
    const statuses = await statusesOf(12, () =>
      s.sf('/v1/plans', key, { headers: { 'x-forwarded-for': `2001:db8:bb:1::${++n}` } }),
    );
    const limited = statuses.filter((x) => x === 429).length;
    expect(limited).toBeGreaterThanOrEqual(6);
    // another /64 is another visitor
    expect((await s.sf('/v1/plans', key, { headers: { 'x-forwarded-for': '2001:db8:bb:2::1' } })).status).toBe(200);
    await flushAll();
    const folded = (await rowsOf(id)).filter((r) => r.status === 429);
    expect(folded.length).toBeLessThanOrEqual(2); // one a second
    expect(folded.reduce((k, r) => k + r.refusedCount!, 0)).toBe(limited);
  });
});

test('an entry keeps at most 512 characters of path and of query', async () => {
  const st = await s.studio();
  const { key, id } = await s.key(st.id, 'publishable');
  await expectProblem(await s.sf(`/v1/${'p'.repeat(3000)}?q=${'y'.repeat(3000)}`, key), 404, 'route_not_found');
  await s.gateway.activity.flush();
  const [row] = await rowsOf(id);
  expect(row!.path).toBe(`/v1/${'p'.repeat(508)}`);
  expect(row!.query).toBe(`q=${'y'.repeat(510)}`);
});

const postgresLookups = async (opsUrl: string) => {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  return Number(/^studio_key_cache_lookups_total\{result="postgres"\} (\d+)/m.exec(text)?.[1] ?? 0);
};

describe('unknown keys', () => {
  test('limited per client address: 429 after the burst, and Postgres is asked no more', async () => {
    const st = await s.studio();
    const live = (await s.key(st.id, 'publishable')).key;
    const address = { 'x-forwarded-for': '192.0.2.10' };
    const before = await postgresLookups(s.opsUrl);
    const started = Date.now();
    const statuses = await statusesOf(60, () => s.sf('/v1/plans', generateKey('publishable'), { headers: address }));
    const seconds = (Date.now() - started) / 1000;
    const lookups = (await postgresLookups(s.opsUrl)) - before;
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.filter((x) => x === 401).length).toBeLessThanOrEqual(10 + Math.ceil(2 * seconds));
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThanOrEqual(40);
    // each lookup that reached Postgres was one of the 401s: none for the refused
    expect(lookups).toBe(statuses.filter((x) => x === 401).length);
    const refused = await s.sf('/v1/plans', generateKey('publishable'), { headers: address });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectProblem(refused, 429, 'rate_limited');
    // another address is not held back, nor is a key already in memory
    await expectProblem(
      await s.sf('/v1/plans', generateKey('publishable'), { headers: { 'x-forwarded-for': '192.0.2.11' } }),
      401,
      'api_key_invalid',
    );
    expect((await s.sf('/v1/plans', live)).status).toBe(200);
    expect((await s.sf('/v1/plans', live, { headers: address })).status).toBe(200);
  });

  test('IPv6 callers are counted per /64', async () => {
    const statuses = (address: string, n: number) =>
      statusesOf(n, () => s.sf('/v1/plans', generateKey('publishable'), { headers: { 'x-forwarded-for': address } }));
    // ten addresses of one /64: one bucket of 10
    const one64 = await Promise.all(Array.from({ length: 10 }, (_, i) => statuses(`2001:db8:aa:1::${i + 1}`, 2)));
    expect(one64.flat().filter((x) => x === 429).length).toBeGreaterThanOrEqual(8);
    // the next /64 has its own
    expect(await statuses('2001:db8:aa:2::1', 3)).toEqual([401, 401, 401]);
    expect([
      clientBlock('2001:DB8:aa:1:ffff::9'),
      clientBlock('2001:db8:aa:1::1'),
      clientBlock('::ffff:192.0.2.1'),
      clientBlock('::1'),
    ]).toEqual(['2001:db8:aa:1::/64', '2001:db8:aa:1::/64', '192.0.2.1', '0:0:0:0::/64']);
  });

  test('a live key found by a lookup gives its token back: a new key is not counted as unknown', async () => {
    const st = await s.studio();
    const address = { 'x-forwarded-for': '192.0.2.20' };
    for (let i = 0; i < 15; i++) {
      const { key } = await s.key(st.id, 'publishable');
      const r = await s.sf('/v1/plans', key, { headers: address });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    }
  });
});

needs('redis').describe('the key cache under a flood of random keys', () => {
  let replica: Gateway;
  let server: ReturnType<typeof serveSurface>;
  const subscriber = () => s.redis.duplicate();
  let sub: ReturnType<typeof subscriber>;
  beforeAll(async () => {
    sub = subscriber();
    await sub.connect();
    // a replica whose memory holds 1,000 live keys and, apart, 1,000 unknown ones; its unknown-key
    // limit lifted, so 10,000 random keys all reach the cache (as they would from 10,000 addresses)
    const config = { ...s.config, RATE_LIMIT_UNKNOWN_KEY: '100000:100000' };
    replica = createGateway({
      config,
      sql: s.sql,
      redis: s.redis,
      subscriber: sub,
      keyCache: { maxEntries: 1_000, maxNegative: 1_000 },
    });
    await replica.start();
    server = serveSurface(replica.storefront);
  });
  afterAll(async () => {
    server?.stop(true);
    await replica?.stop();
    await quitRedis(sub);
  });

  test('a live key stays in memory after 10,000 random keys; the unknown ones stay within their own cap', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'publishable');
    const url = `http://127.0.0.1:${server.port}/v1/plans`;
    expect((await fetch(url, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect(replica.keys.peek(hashKey(key))).toMatchObject({ studioId: st.id });
    let sent = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (sent < 10_000) {
          sent++;
          const r = await fetch(url, { headers: { authorization: `Bearer ${generateKey('publishable')}` } });
          expect(r.status).toBe(401);
          await r.arrayBuffer();
        }
      }),
    );
    expect(replica.keys.peek(hashKey(key))).toMatchObject({ studioId: st.id });
    expect(replica.keys.cached).toBeLessThanOrEqual(1_001);
  }, 120_000);
});
