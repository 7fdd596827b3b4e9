import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectProblem, inMode, MODES, type Stack, startStack } from '../../test/harness';
import { redisNames } from '../src/keys/redis-names';
import { RateLimiter } from '../src/limits/rate-limiter';
import { RedisBuckets } from '../src/limits/redis-buckets';

// the same limits with Redis and in single-node mode (buckets in the gateway's memory, docs/design/single-node.md)
for (const mode of MODES)
  describe(`rate limits (${mode})`, () => {
    let s: Stack;
    beforeAll(
      async () =>
        (s = await startStack(
          inMode(mode, {
            env: { RATE_LIMIT_SECRET: '1:3', RATE_LIMIT_PUBLISHABLE_CLIENT: '1:2', RATE_LIMIT_PUBLISHABLE: '1:100' },
          }),
        )),
    );
    afterAll(() => s.close());

    test('a secret key over its burst gets 429 rate_limited with Retry-After and RateLimit fields', async () => {
      const st = await s.studio();
      const { key } = await s.key(st.id, 'secret', ['instructors:read']);
      const statuses: number[] = [];
      let last: Response | null = null;
      for (let i = 0; i < 5; i++) {
        last = await s.mg('/v1/instructors', key);
        statuses.push(last.status);
        if (last.status === 200) await last.arrayBuffer();
      }
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses[4]).toBe(429);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(last!.headers.get('ratelimit')).toMatch(/^"key";r=0;t=\d+$/);
      await expectProblem(last!, 429, 'rate_limited');
      // another key of the same studio has its own bucket
      const other = (await s.key(st.id, 'secret', ['instructors:read'])).key;
      expect((await s.mg('/v1/instructors', other)).status).toBe(200);
    });

    test('a publishable key is limited per client address', async () => {
      const st = await s.studio();
      const { key } = await s.key(st.id, 'publishable');
      const a = await s.sf('/v1/instructors', key);
      const b = await s.sf('/v1/instructors', key);
      const c = await s.sf('/v1/instructors', key);
      expect([a.status, b.status, c.status]).toEqual([200, 200, 429]);
      expect(c.headers.get('ratelimit-policy')).toBe('"client";q=1;w=1, "key";q=1;w=1');
    });

    test.if(mode === 'redis')(
      'a lease half spent is renewed in the background, so a steady stream never waits on Redis; a revoked marker found then drops the lease',
      async () => {
        const prefix = `${s.config.REDIS_PREFIX}lease_${Date.now()}:`;
        const limiter = new RateLimiter(new RedisBuckets(s.redis, redisNames(prefix)), {
          secret: '1000:1000',
          publishableClient: '1:1',
          publishable: '1:1',
        });
        const g = limiter.groupFor('key_lease', 'secret', '');
        expect(g.lease).toBe(50);
        expect(limiter.peek(g, 'hash_a')).toBeUndefined(); // no lease yet: the first request asks Redis
        expect((await limiter.check('hash_a', g))?.allowed).toBe(true);
        // 200 requests, each answered from memory: renewals run while tokens remain
        for (let i = 0; i < 200; i++) {
          const r = limiter.peek(g, 'hash_a');
          expect(r?.allowed).toBe(true);
          if (g.pending) await g.pending;
        }
        expect(g.left).toBeGreaterThan(0);

        await s.redis.set(redisNames(prefix).revoked('hash_a'), '1');
        while (!g.pending) expect(limiter.peek(g, 'hash_a')?.allowed).toBe(true);
        await g.pending;
        await Bun.sleep(0);
        expect(limiter.peek(g, 'hash_a')).toBeUndefined();
        expect((await limiter.check('hash_a', g))?.revoked).toBe(true);
      },
    );
  });
