#!/usr/bin/env bun
import { createApiKey } from '@studio/control';
import { createSql } from '@studio/shared/io';
import { createStudio } from '../lib/studios';
import { createBenchStack } from './stack';
import { runWrk } from './wrk';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RATE = 10;
const BURST = 10;
if (!Bun.which('wrk')) {
  console.error('error: wrk is not installed (apt-get install -y wrk)');
  process.exit(1);
}

const stack = await createBenchStack(process.env.BENCH_SERVER_CPU ?? '0', { RATE_LIMIT_SECRET: `${RATE}:${BURST}` });
let failed = false;
try {
  const sql = createSql(stack.config.DATABASE_URL, { max: 2 });
  const { studio } = await createStudio(sql, { name: 'Bench limits' });
  const { key } = await createApiKey(sql, {
    studioId: studio.id,
    kind: 'secret',
    name: 'bench',
    scopes: ['instructors:read'],
  });
  await sql.end();
  await stack.start(['management-service', 'gateway']);
  const second = await stack.spawnGateway('gateway-2');

  const targets = [stack.config.MANAGEMENT_PUBLIC_URL, second.managementUrl].map((base) => `${base}/v1/instructors`);
  const headers = { authorization: `Bearer ${key}` };
  const started = performance.now();
  const results = await Promise.all(
    targets.map((url) =>
      runWrk(url, { connections: 10, seconds: SECONDS, cpu: process.env.BENCH_LOAD_CPU ?? '1', headers }),
    ),
  );
  const elapsed = (performance.now() - started) / 1000;
  const total = results.reduce((n, r) => n + r.requests, 0);
  const admitted = results.reduce((n, r) => n + r.requests - r.non2xx, 0);
  const allowed = BURST + Math.ceil(RATE * elapsed);
  console.log(`one ${RATE}:${BURST} key, two gateway replicas, 2 × 10 connections for ${elapsed.toFixed(2)} s`);
  results.forEach((r, i) =>
    console.log(
      `  replica ${i + 1}: ${r.requests} requests, ${r.requests - r.non2xx} admitted, ${r.non2xx} refused (429)`,
    ),
  );
  console.log(
    `admitted ${admitted} of ${total}; the limit allows at most ${allowed} (burst ${BURST} + ${RATE}/s × ${elapsed.toFixed(2)} s): ${((admitted / allowed) * 100).toFixed(1)} % of the allowance`,
  );
  failed = admitted > allowed;
  console.log(failed ? 'RESULT: over-admitted' : 'RESULT: exact (never over the allowance)');
} catch (err) {
  console.error(`bench failed: ${(err as Error).stack ?? err}`);
  failed = true;
} finally {
  await stack.stop();
}
process.exit(failed ? 1 : 0);
