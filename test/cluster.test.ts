/**
 * On a Redis Cluster (docs/design/scale-out.md; `bun run test:cluster` starts one): broadcasts reach
 * every gateway replica whichever node each one listens on. Two replicas subscribe through
 * two different masters; a revocation and a Storefront change published through the
 * cluster client reach both, and the revoke counts both before it returns.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createGateway, type Gateway } from '@studio/gateway';
import { revokeApiKey } from '@studio/gateway/keys/store';
import { publishStorefrontChange } from '@studio/shared/io/invalidation';
import { connectRedis, createRedis, quitRedis, type Redis } from '@studio/shared/io/redis';
import { expectProblem, type Stack, startStack } from './harness';

const nodes = (process.env.TEST_REDIS_CLUSTER_NODES ?? '').split(',').filter(Boolean);

describe.skipIf(nodes.length < 2)('broadcasts on a Redis Cluster', () => {
  let s: Stack;
  const replicas: { gateway: Gateway; server: ReturnType<typeof Bun.serve>; subscriber: Redis }[] = [];
  beforeAll(async () => {
    s = await startStack();
    for (const node of nodes.slice(0, 2)) {
      // a plain client of one master: its subscriptions live on that node only
      const subscriber = createRedis(node, 'replica subscriber');
      await connectRedis(subscriber);
      const gateway = createGateway({ config: s.config, sql: s.sql, redis: s.redis, subscriber });
      await gateway.start();
      replicas.push({
        gateway,
        subscriber,
        server: Bun.serve({
          hostname: '127.0.0.1',
          port: 0,
          fetch: (req, srv) =>
            new URL(req.url).pathname.startsWith('/v1/instructors') && req.headers.get('x-surface') === 'sf'
              ? gateway.storefront(req, srv)
              : gateway.management(req, srv),
        }),
      });
    }
  });
  afterAll(async () => {
    for (const r of replicas) {
      r.server.stop(true);
      await r.gateway.stop();
      await quitRedis(r.subscriber);
    }
    await s.close();
  });

  const call = (i: number, key: string, surface: 'sf' | 'mg' = 'mg') =>
    fetch(`http://127.0.0.1:${replicas[i]!.server.port}/v1/instructors`, {
      headers: { authorization: `Bearer ${key}`, 'x-surface': surface },
    });

  test('a revoke reaches replicas on two different nodes and waits for both', async () => {
    const studio = await s.studio();
    const { key, id } = await s.key(studio.id, 'secret', ['instructors:read']);
    for (const i of [0, 1]) expect((await call(i, key)).status).toBe(200); // cached in both replicas' memory
    const revoked = await revokeApiKey(s.sql, s.bus, id);
    expect(revoked.propagated).toBe(true);
    for (const i of [0, 1]) await expectProblem(await call(i, key), 401, 'api_key_revoked');
  });

  test('a Storefront change reaches the answer caches of replicas on two different nodes', async () => {
    const studio = await s.studio();
    const { key } = await s.key(studio.id, 'publishable');
    for (const i of [0, 1]) expect((await (await call(i, key, 'sf')).json()).instructors).toEqual([]);
    await s.sql`insert into instructors (id, studio_id, name) values (${`ins_${crypto.randomUUID().replaceAll('-', '')}`}, ${studio.id}, 'Noor')`;
    await publishStorefrontChange(s.redis, s.config.REDIS_PREFIX, studio.id);
    await Bun.sleep(100);
    for (const i of [0, 1]) expect((await (await call(i, key, 'sf')).json()).instructors).toHaveLength(1);
  });
});
