/**
 * Exact limits: a request is admitted only when a token was really taken from the bucket. With
 * Redis, across replicas: two gateways, 20 concurrent clients, one 10:10 secret key for 2 s; in
 * single-node mode, the one gateway's memory (docs/design/single-node.md). Either way never more than
 * burst + rate × seconds answers 200.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { redisNames } from '@studio/shared';
import { quitRedis } from '@studio/shared/io';
import { inMode, MODES, type Stack, serveSurface, startStack } from '../../test/harness';
import { inEachMode } from '../../test/needs';
import { createGateway, type Gateway } from '../src/app';
import { MemoryBuckets } from '../src/limits/memory-buckets';
import { RateLimiter } from '../src/limits/rate-limiter';
import { RedisBuckets } from '../src/limits/redis-buckets';

for (const mode of MODES)
  inEachMode(mode).describe(`exact limits (${mode})`, () => {
    let s: Stack;
    let replica: Gateway | undefined;
    let server: ReturnType<typeof serveSurface> | undefined;
    let sub: Stack['redis'] | undefined;
    beforeAll(async () => {
      s = await startStack(inMode(mode, { env: { RATE_LIMIT_SECRET: '10:10' } }));
      if (mode === 'single-node') return; // one gateway only: that is the mode
      sub = s.redis.duplicate();
      await sub.connect();
      replica = createGateway({ config: s.config, sql: s.sql, redis: s.redis, subscriber: sub });
      await replica.start();
      server = serveSurface(replica.management);
    });
    afterAll(async () => {
      server?.stop(true);
      await replica?.stop();
      if (sub) await quitRedis(sub);
      await s?.close();
    });

    test(`${mode === 'redis' ? 'two replicas' : 'one gateway'}, 20 concurrent clients, one 10:10 key for 2 s: at most burst + rate × seconds admitted`, async () => {
      const st = await s.studio();
      const { key } = await s.key(st.id, 'secret', ['instructors:read']);
      const urls = server
        ? [`${s.managementUrl}/v1/instructors`, `http://127.0.0.1:${server.port}/v1/instructors`]
        : [`${s.managementUrl}/v1/instructors`];
      const counts = { admitted: 0, limited: 0, other: 0 };
      const started = performance.now();
      const deadline = started + 2_000;
      let lastEnd = started;
      await Promise.all(
        Array.from({ length: 20 }, async (_, client) => {
          for (let i = 0; performance.now() < deadline; i++) {
            const res = await fetch(urls[(client + i) % urls.length]!, { headers: { authorization: `Bearer ${key}` } });
            await res.arrayBuffer();
            lastEnd = Math.max(lastEnd, performance.now()); // every admission was decided before its answer arrived
            if (res.status === 200) counts.admitted++;
            else if (res.status === 429) counts.limited++;
            else counts.other++;
          }
        }),
      );
      const seconds = (lastEnd - started) / 1000;
      const allowed = 10 + Math.ceil(10 * seconds);
      console.log(
        `${mode}: admitted ${counts.admitted} of ${counts.admitted + counts.limited} (allowed ${allowed} in ${seconds.toFixed(2)} s)`,
      );
      expect(counts.other).toBe(0);
      expect(counts.limited).toBeGreaterThan(0);
      expect(counts.admitted).toBeGreaterThanOrEqual(10);
      expect(counts.admitted).toBeLessThanOrEqual(allowed);
    });

    test('concurrent waiters get exactly the tokens there are, never one without a token', async () => {
      // Redis: two replicas' limiters on one bucket; single-node: the one limiter in memory. 10 tokens, refilling too slowly to matter
      const names = redisNames(`${s.config.REDIS_PREFIX}race_${Date.now()}:`);
      const store =
        mode === 'redis'
          ? () => new RedisBuckets(s.redis, names)
          : (() => {
              const one = new MemoryBuckets();
              return () => one;
            })();
      const replicas = [0, 1].map(
        () => new RateLimiter(store(), { secret: '0.001:10', publishableClient: '1:1', publishable: '1:1' }),
      );
      const decisions = await Promise.all(
        Array.from({ length: 60 }, (_, i) => {
          const limiter = replicas[mode === 'redis' ? i % 2 : 0]!;
          const g = limiter.groupFor('key_race', 'secret', '');
          return limiter.peek(g, 'hash_race') ?? limiter.check('hash_race', g);
        }),
      );
      expect(decisions.every((d) => d !== null)).toBe(true); // the store answered: nobody may fail open
      expect(decisions.filter((d) => d?.allowed).length).toBe(10);
    });
  });
