/**
 * On a Redis Cluster (docs/design/scale-out.md; `bun run test:cluster` starts one): broadcasts reach
 * every gateway replica whichever node each one listens on. Two replicas subscribe through
 * two different masters; a revocation and a Storefront change published through the
 * cluster client reach both, and the revoke counts both before it returns.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { revokeApiKey } from '@studio/control';
import { createGateway, type Gateway } from '@studio/gateway';
import { connectRedis, createRedis, publishStorefrontChange, quitRedis, type Redis } from '@studio/shared/io';
import { expectProblem, type Stack, serveSurface, startStack } from './harness';

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

describe.skipIf(nodes.length < 2)('a gateway subscribed through the cluster client', () => {
  let s: Stack;
  let gateway: Gateway;
  let subscriber: Redis;
  let server: ReturnType<typeof serveSurface>;
  beforeAll(async () => {
    s = await startStack();
    subscriber = s.redis.duplicate(); // as gateway/src/main.ts makes it: a cluster client, which moves its subscription itself
    await connectRedis(subscriber);
    gateway = createGateway({ config: s.config, sql: s.sql, redis: s.redis, subscriber });
    await gateway.start();
    server = serveSurface(gateway.management);
  });
  afterAll(async () => {
    server.stop(true);
    await gateway.stop();
    await quitRedis(subscriber);
    await s.close();
  });
  const until = async (what: string, check: () => boolean) => {
    for (const deadline = Date.now() + 10_000; !check(); await Bun.sleep(20))
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  };

  test("its subscription's connection killed: memory distrusted at once, and trusted again once its own message comes back", async () => {
    await until('the first message back', () => gateway.keys.useLocal);
    const studio = await s.studio();
    const { key, id } = await s.key(studio.id, 'secret', ['instructors:read']);
    const call = () =>
      fetch(`http://127.0.0.1:${server.port}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } });
    expect((await call()).status).toBe(200); // its record now in this gateway's memory
    // every node drops its subscriber connections (a failover, a node restart): a broadcast sent now would be missed
    for (const node of nodes) {
      const admin = createRedis(node, 'node admin');
      await connectRedis(admin);
      await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'pubsub']);
      await quitRedis(admin);
    }
    await Bun.sleep(100);
    // revoked in Postgres alone (as if its broadcast was the one missed): memory must no longer answer for the key
    await s.sql`update api_keys set revoked_at = now() where id = ${id}`;
    await expectProblem(await call(), 401, 'api_key_revoked');
    await until('memory trusted again', () => gateway.keys.useLocal);
  });
});
