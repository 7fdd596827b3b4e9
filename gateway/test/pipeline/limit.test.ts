import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import { randomBase62, redisNames } from '@studio/shared';
import {
  connectRedis,
  createRedis,
  createSql,
  deleteByPrefix,
  quitRedis,
  type Redis,
  type Sql,
} from '@studio/shared/io';
import { has, needs } from '../../../test/needs';
import { asResponse } from '../../src/answer';
import { KeyResolver } from '../../src/keys/resolver';
import type { BucketStore } from '../../src/limits/buckets';
import { MemoryBuckets } from '../../src/limits/memory-buckets';
import { RateLimiter } from '../../src/limits/rate-limiter';
import { RedisBuckets } from '../../src/limits/redis-buckets';
import { trustedProxySet } from '../../src/pipeline/context';
import { limitStep } from '../../src/pipeline/limit';
import { ctxOf, problemOf, profiles, record } from './helpers';

const p = profiles();
let redis: Redis;
let sql: Sql;
const prefix = `t_limit_${randomBase62(8)}:`;
const names = redisNames(prefix);
beforeAll(async () => {
  if (has('redis')) {
    redis = createRedis(process.env.TEST_REDIS_URL!, 'test redis', process.env.TEST_REDIS_CLUSTER_NODES);
    await connectRedis(redis);
  }
  sql = createSql(process.env.TEST_DATABASE_URL!, { max: 1 });
});
afterAll(async () => {
  if (redis) {
    await deleteByPrefix(redis, prefix);
    await quitRedis(redis);
  }
  await sql.end();
});

/** A context that has passed authorize, for a key with this id and kind. */
function authorized(
  keyId: string,
  kind: 'secret' | 'publishable',
  peer = '203.0.113.7',
  headers: Record<string, string> = {},
) {
  const c = ctxOf('http://gw/v1/classes', { headers }, peer);
  c.key = record({ id: keyId, kind });
  c.hash = `h_${keyId}`;
  return c;
}

/** Both implementations of the buckets: shared in Redis, and in memory (single-node mode). */
const STORES: [string, ReturnType<typeof needs>, () => BucketStore][] = [
  ['Redis', needs('redis'), () => new RedisBuckets(redis, names)],
  ['memory (single-node)', needs(), () => new MemoryBuckets()],
];

for (const [storeName, need, store] of STORES)
  need.describe(`limit step, buckets in ${storeName}`, () => {
    test('admits while the bucket has tokens (RateLimit fields on the context), then 429 with Retry-After', async () => {
      const limiter = new RateLimiter(store(), { secret: '1:3', publishableClient: '1:3', publishable: '100:100' });
      const limit = limitStep(p.management, limiter, new KeyResolver(sql, redis ?? null, names), trustedProxySet(''));
      const keyId = `k${randomBase62(6)}`;
      const outcomes: (string | null)[] = [];
      for (let i = 0; i < 5; i++) {
        const c = authorized(keyId, 'secret');
        const refused = await limit(c);
        outcomes.push(refused ? (await problemOf(refused)).code : null);
        if (!refused) expect(c.limitHeaders?.['ratelimit-policy']).toBe('"key";q=1;w=1');
        else expect(Number(asResponse(refused).headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      expect(outcomes).toEqual([null, null, null, 'rate_limited', 'rate_limited']);
    });

    test('a publishable key is limited per visitor address; X-Forwarded-For counts only from a trusted proxy', async () => {
      const limiter = new RateLimiter(store(), { secret: '1:1', publishableClient: '1:1', publishable: '100:100' });
      const limit = limitStep(
        p.storefront,
        limiter,
        new KeyResolver(sql, redis ?? null, names),
        trustedProxySet('10.0.0.1'),
      );
      const keyId = `k${randomBase62(6)}`;
      expect(await limit(authorized(keyId, 'publishable', '198.51.100.1'))).toBeNull();
      expect(await limit(authorized(keyId, 'publishable', '198.51.100.2'))).toBeNull(); // another visitor
      expect(await limit(authorized(keyId, 'publishable', '198.51.100.1'))).not.toBeNull();
      // through the trusted proxy, each forwarded visitor is its own
      expect(
        await limit(authorized(keyId, 'publishable', '10.0.0.1', { 'x-forwarded-for': '192.0.2.9, 10.0.0.1' })),
      ).toBeNull();
      // an untrusted peer cannot pick its address
      expect(
        await limit(authorized(keyId, 'publishable', '198.51.100.1', { 'x-forwarded-for': '192.0.2.77' })),
      ).not.toBeNull();
      // nor can a visitor behind the proxy: the entries left of what the proxy appended are the visitor's own writing
      const spoofed = (first: string) =>
        authorized(keyId, 'publishable', '10.0.0.1', { 'x-forwarded-for': `${first}, 203.0.113.50` });
      expect(await limit(spoofed('6.6.6.1'))).toBeNull();
      expect(await limit(spoofed('6.6.6.2'))).not.toBeNull(); // the same visitor, 203.0.113.50, over its limit
    });
  });

describe('limit step', () => {
  needs('redis').test(
    'a revocation marker in Redis refuses with api_key_revoked; a limiter without Redis admits (fail open)',
    async () => {
      await redis.set(names.revoked('h_revoked'), '1', { EX: 60 });
      const limiter = new RateLimiter(new RedisBuckets(redis, names), {
        secret: '10:10',
        publishableClient: '1:1',
        publishable: '1:1',
      });
      const limit = limitStep(p.management, limiter, new KeyResolver(sql, redis, names), trustedProxySet(''));
      expect((await problemOf((await limit(authorized('revoked', 'secret')))!)).code).toBe('api_key_revoked');

      const blind = limitStep(
        p.management,
        new RateLimiter(new RedisBuckets(null, names), { secret: '1:1', publishableClient: '1:1', publishable: '1:1' }),
        new KeyResolver(sql, null, names),
        trustedProxySet(''),
      );
      // admitted, and said in the log, once (not once a call)
      const err = spyOn(console, 'error').mockImplementation(() => {});
      try {
        for (let i = 0; i < 3; i++) expect(await blind(authorized('any', 'secret'))).toBeNull();
        const said = err.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('rate limits fail open'));
        expect(said).toHaveLength(1);
      } finally {
        err.mockRestore();
      }
    },
  );

  test('buckets in memory (single-node mode) never fail open: every call is decided now, synchronously, and refused once spent', () => {
    const limiter = new RateLimiter(new MemoryBuckets(), {
      secret: '1:2',
      publishableClient: '1:1',
      publishable: '1:1',
    });
    const g = limiter.groupFor('key_memory', 'secret', '');
    const answers = Array.from({ length: 4 }, () => limiter.peek(g, 'h_memory'));
    expect(answers.map((a) => a?.allowed)).toEqual([true, true, false, false]);
    expect(answers[3]!.retryAfter).toBe(1);
    expect(answers[3]!.headers.ratelimit).toBe('"key";r=0;t=2');
  });

  test("memory buckets: the Redis script's arithmetic on a monotonic clock; a bucket full again is forgotten", () => {
    const b = new MemoryBuckets();
    const buckets = [{ policy: 'key', name: 'k', rate: 10, burst: 20 }];
    expect(b.takeNow('h', buckets, 15, 0)).toEqual({ granted: 15, remaining: [5], full: [2], nextMs: 0 });
    expect(b.takeNow('h', buckets, 15, 0.1)).toMatchObject({ granted: 6, remaining: [0] }); // 5 left + 1 refilled in 100 ms
    expect(b.takeNow('h', buckets, 1, 0.1)).toMatchObject({ granted: 0, nextMs: 100 });
    expect(b.size).toBe(1);
    b.takeNow('other', buckets, 1, 20); // the sweep (every 10 s) forgets 'h', full again by 2.1 s
    expect(b.size).toBe(1);
  });
});
