/** The gateway when its neighbours fail: a dead Redis, a dead or slow service. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { channels } from '@studio/shared';
import { connectRedis, createRedis, quitRedis } from '@studio/shared/io';
import { freePort } from '../../scripts/lib/ports';
import { startRedisServer } from '../../scripts/lib/throwaway-redis';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { needs } from '../../test/needs';

needs('redis').describe('Redis unreachable', () => {
  let s: Stack;
  beforeAll(async () => (s = await startStack({ gatewayRedisUrl: 'redis://127.0.0.1:1' })));
  afterAll(() => s.close());

  test('valid keys still authenticate from Postgres, and revocation still holds', async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'secret', ['instructors:read']);
    for (let i = 0; i < 3; i++) expect((await s.mg('/v1/instructors', key)).status).toBe(200);
    // revoke in Postgres only: no marker, no broadcast can reach this gateway
    await s.sql`update api_keys set revoked_at = now() where id = ${id}`;
    await expectProblem(await s.mg('/v1/instructors', key), 401, 'api_key_revoked');
    await expectProblem(await s.mg('/v1/instructors', null), 401, 'api_key_missing');
  });
  test('readiness reports Redis down and stays ready (degraded, still serving)', async () => {
    const res = await fetch(`${s.managementUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { postgres: 'up', redis: 'down' } });
  });
});

needs('redis', 'redis-server').describe('Redis dies under a running gateway', () => {
  let s: Stack;
  let proc: ReturnType<typeof Bun.spawn>;
  beforeAll(async () => {
    const redis = await startRedisServer();
    proc = redis.proc;
    s = await startStack({ gatewayRedisUrl: redis.url });
  });
  afterAll(async () => {
    proc.kill();
    await s.close();
  });

  test('after the kill, cached keys are re-checked in Postgres, so a revocation made meanwhile holds', async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'secret', ['instructors:read']);
    expect((await s.mg('/v1/instructors', key)).status).toBe(200); // cached in-process and in the doomed Redis
    proc.kill('SIGKILL');
    await proc.exited;
    await Bun.sleep(200);
    expect((await s.mg('/v1/instructors', key)).status).toBe(200);
    await s.sql`update api_keys set revoked_at = now() where id = ${id}`;
    await expectProblem(await s.mg('/v1/instructors', key), 401, 'api_key_revoked');
  });
});

needs('redis', 'redis-server').describe('Redis stops answering, its connection up (paused)', () => {
  let s: Stack;
  let proc: ReturnType<typeof Bun.spawn>;
  beforeAll(async () => {
    const redis = await startRedisServer();
    proc = redis.proc;
    // a limit whose lease is one token: every call asks Redis
    s = await startStack({ gatewayRedisUrl: redis.url, env: { RATE_LIMIT_SECRET: '20:20' } });
  });
  afterAll(async () => {
    proc.kill('SIGCONT');
    proc.kill();
    await s.close();
  });

  test('the limits fail open within a second, then at once, and keys are looked up in Postgres: no call waits on a Redis that does not answer', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'secret', ['instructors:read']);
    expect((await s.mg('/v1/instructors', key)).status).toBe(200); // the key and a lease in memory
    proc.kill('SIGSTOP');
    try {
      const took: number[] = [];
      for (let i = 0; i < 30; i++) {
        const t = performance.now();
        expect((await s.mg('/v1/instructors', key)).status).toBe(200);
        took.push(performance.now() - t);
      }
      // one call waits out the reply's deadline (1 s); the ones after it do not wait again
      expect(Math.max(...took)).toBeLessThan(1_800);
      expect(took.filter((ms) => ms > 500).length).toBeLessThanOrEqual(1);
      // a key not yet in memory is looked up in Postgres, not held by the Redis tier
      const other = await s.key(st.id, 'secret', ['instructors:read']);
      const t = performance.now();
      expect((await s.mg('/v1/instructors', other.key)).status).toBe(200);
      expect(performance.now() - t).toBeLessThan(1_800);
    } finally {
      proc.kill('SIGCONT');
    }
  }, 30_000);
});

needs('redis', 'redis-server').describe('Redis down when the gateway starts, up later', () => {
  let s: Stack;
  let proc: ReturnType<typeof Bun.spawn> | null = null;
  let port = 0;
  beforeAll(async () => {
    port = await freePort();
    s = await startStack({ gatewayRedisUrl: `redis://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    proc?.kill();
    await s.close();
  });

  test('it subscribes once Redis answers, before it trusts its memory again', async () => {
    expect(s.gateway.keys.useLocal).toBe(false); // no subscription: every key verified in Postgres
    proc = (await startRedisServer([], port)).proc;
    const deadline = Date.now() + 15_000;
    while (!s.gateway.keys.useLocal && Date.now() < deadline) await Bun.sleep(50);
    expect(s.gateway.keys.useLocal).toBe(true);
    // trusting memory, it hears the broadcasts: Redis counts it among the revocation channel's subscribers
    const probe = createRedis(`redis://127.0.0.1:${port}`, 'test probe');
    await connectRedis(probe);
    try {
      const names = channels(s.config.REDIS_PREFIX);
      const counts = await probe.pubSubNumSub([names.keysRevoked, names.storefrontChanged]);
      expect(counts).toEqual({ [names.keysRevoked]: 1, [names.storefrontChanged]: 1 });
    } finally {
      await quitRedis(probe);
    }
  });
});

describe('services down or slow', () => {
  let s: Stack;
  const slow = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async () => (await Bun.sleep(3_000), new Response('late')),
  });
  beforeAll(async () => {
    s = await startStack({
      gatewayEnv: {
        STOREFRONT_SERVICE_URL: 'http://127.0.0.1:1',
        MANAGEMENT_SERVICE_URL: `http://127.0.0.1:${slow.port}`,
        UPSTREAM_TIMEOUT_MS: '300',
      },
    });
  });
  afterAll(async () => {
    slow.stop(true);
    await s.close();
  });

  test('an unreachable service -> 503 service_unavailable', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'publishable');
    await expectProblem(await s.sf('/v1/instructors', key), 503, 'service_unavailable');
  });
  test('concurrent reads that share one upstream call count one failed call, not one per waiter', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'publishable');
    const failures = async () => {
      const text = await (await fetch(`${s.opsUrl}/metrics`)).text();
      const m = /^studio_upstream_errors_total\{surface="storefront",kind="unavailable"\} (\d+)$/m.exec(text);
      return Number(m?.[1] ?? 0);
    };
    const before = await failures();
    const answers = await Promise.all(Array.from({ length: 20 }, () => s.sf('/v1/plans', key)));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(503));
    const counted = (await failures()) - before;
    expect(counted).toBeGreaterThanOrEqual(1);
    expect(counted).toBeLessThan(20);
  });
  test('a service slower than the timeout -> 504 upstream_timeout, not a hung connection', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'secret', ['instructors:read']);
    const t0 = performance.now();
    await expectProblem(await s.mg('/v1/instructors', key), 504, 'upstream_timeout');
    expect(performance.now() - t0).toBeLessThan(2_000);
  });
});
