#!/usr/bin/env bun
import { createApiKey } from '@studio/control';
import { createGateway } from '@studio/gateway';
import { HeldAnswer } from '@studio/gateway/tooling';
/**
 * `bun run bench:pipeline`: the gateway's own work on a cached Storefront read, without sockets.
 * The real pipeline (createGateway, with Postgres and Redis) is driven in-process with Request
 * objects, its cache holding one 500-class answer, activity flushed as in production; prints the
 * time a request takes in JavaScript and Bun's natives, three runs of BENCH_REQUESTS (200,000).
 * No sockets, so the pipeline is measured alone; the VM's drift still shows, so A/B a change in
 * alternating runs.
 */
import { loadConfig, setLogLevel } from '@studio/shared';
import { connectRedis, createRedis, createSql, quitRedis } from '@studio/shared/io';
import { createStudio } from '../lib/studios';
import { createBenchStack } from './stack';

const N = Number(process.env.BENCH_REQUESTS ?? 200_000);
setLogLevel('warn');
const stack = await createBenchStack();
const config = loadConfig({ ...stack.env, ACTIVITY_FLUSH_MS: '500' });
const sql = createSql(config.DATABASE_URL, { max: 4 });
const redis = createRedis(config.REDIS_URL, 'bench redis', '');
const subscriber = redis.duplicate();
await Promise.all([connectRedis(redis), connectRedis(subscriber)]);
const gw = createGateway({ config, sql, redis, subscriber });
try {
  const { studio } = await createStudio(sql, { name: 'Bench pipeline' });
  const { key } = await createApiKey(sql, { studioId: studio.id, kind: 'publishable', name: 'bench', scopes: [] });
  await gw.start();
  const body = JSON.stringify({
    classes: Array.from({ length: 500 }, (_, i) => ({
      id: `occ_${i}`,
      title: `Class ${i}`,
      startsAt: new Date(Date.now() + i * 3_600_000).toISOString(),
    })),
  });
  // the service's answer, kept as the gateway keeps it (re-filled: entries live 5 s)
  const fill = () =>
    gw.storefrontCache.fill(
      studio.id,
      '/v1/classes',
      null,
      null,
      async () => new HeldAnswer(200, { etag: '"bench"', 'content-type': 'application/json' }, null, Buffer.from(body)),
    );
  const server = { requestIP: () => ({ address: '127.0.0.1' }) };
  const headers = { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip, deflate, br' };
  const reqs = Array.from({ length: 64 }, () => new Request(`${config.STOREFRONT_PUBLIC_URL}/v1/classes`, { headers }));
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) {
      if (i % 65_536 === 0) await fill();
      const res = await gw.storefront(reqs[i & 63]!, server);
      if (res.status !== 200) throw new Error(`answered ${res.status}`);
    }
  };
  await run(N / 2); // warm-up: the JIT's tiers
  for (let round = 1; round <= 3; round++) {
    const t = performance.now();
    await run(N);
    console.log(`round ${round}: ${(((performance.now() - t) * 1e6) / N).toFixed(0)} ns a cached read (${N} requests)`);
  }
} finally {
  await gw.stop();
  await Promise.all([quitRedis(subscriber), quitRedis(redis), sql.end()]);
  await stack.stop();
}
