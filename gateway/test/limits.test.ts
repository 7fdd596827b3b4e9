import { afterAll, beforeAll, expect, test } from 'bun:test';
import { redisNames } from '@studio/shared';
import { expectProblem, inMode, MODES, type Stack, startStack } from '../../test/harness';
import { inEachMode } from '../../test/needs';
import { RateLimiter } from '../src/limits/rate-limiter';
import { RedisBuckets } from '../src/limits/redis-buckets';

// the same limits with Redis and in single-node mode (buckets in the gateway's memory, docs/design/single-node.md)
for (const mode of MODES)
  inEachMode(mode).describe(`rate limits (${mode})`, () => {
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
    /** A limiter over the stack's Redis, its buckets under names of their own (returned too). */
    const limiterOf = (name: string, limits: { secret: string; publishableClient: string; publishable: string }) => {
      const names = redisNames(`${s.config.REDIS_PREFIX}${name}_${Date.now()}:`);
      return Object.assign(new RateLimiter(new RedisBuckets(s.redis, names), limits), { names });
    };

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
      // each bucket's state, in the policy's order
      expect(c.headers.get('ratelimit')).toMatch(/^"client";r=0;t=\d+, "key";r=\d+;t=\d+$/);
    });

    test.if(mode === 'redis')(
      "concurrent calls of one visitor are admitted up to the burst, exactly: a refill asks for as many tokens as wait, not a lease's worth",
      async () => {
        const limiter = limiterOf('burst', {
          secret: '1:1',
          publishableClient: '20:60',
          publishable: '1000:2000',
        });
        const g = limiter.groupFor('key_burst', 'publishable', '203.0.113.7');
        expect(g.lease).toBe(1);
        const results = await Promise.all(Array.from({ length: 70 }, () => limiter.check('hash_burst', g)));
        const allowed = results.filter((r) => r?.allowed).length;
        expect(allowed).toBe(60); // the visitor's burst, not the 20 that one token a round allowed
        expect(results.filter((r) => r && !r.allowed).length).toBe(10);
      },
    );

    test.if(mode === 'redis')(
      "visitors who make one call each spend one token each of the key's bucket: no lease is renewed ahead for them",
      async () => {
        const limiter = limiterOf('oneshot', {
          secret: '1:1',
          publishableClient: '20:60',
          publishable: '1:5',
        });
        const allowed: boolean[] = [];
        for (let i = 1; i <= 6; i++) {
          const g = limiter.groupFor('key_oneshot', 'publishable', `203.0.113.${i}`);
          allowed.push(!!(await limiter.check('hash_oneshot', g))?.allowed);
          if (g.pending) await g.pending; // a renewal, had one started, would have taken its token by now
        }
        expect(allowed).toEqual([true, true, true, true, true, false]); // the key's burst of 5, to the visitor
      },
    );

    test.if(mode === 'redis')(
      'a lease half spent is renewed in the background, so a steady stream never waits on Redis; a revoked marker found then drops the lease',
      async () => {
        const limiter = limiterOf('lease', {
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

        await s.redis.set(limiter.names.revoked('hash_a'), '1');
        while (!g.pending) expect(limiter.peek(g, 'hash_a')?.allowed).toBe(true);
        await g.pending;
        await Bun.sleep(0);
        expect(limiter.peek(g, 'hash_a')).toBeUndefined();
        expect((await limiter.check('hash_a', g))?.revoked).toBe(true);
      },
    );
  });
