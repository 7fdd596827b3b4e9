/**
 * The `limits` case (`bun run bench limits`): one secret key limited to 10 requests a second (burst 10), hammered
 * through two gateway processes sharing one Redis by two wrk at once for `BENCH_SECONDS` (5). The limit must never
 * admit more than it allows: burst + rate × the seconds elapsed.
 */
import { createApiKey } from '@studio/control';
import { createSql } from '@studio/shared/io';
import { createStudio } from '../lib/studios';
import { caseOptions, report } from './report';
import { createBenchStack } from './stack';
import { requireTools, runWrk } from './wrk';

const { SECONDS, SERVER_CPU, LOAD_CPU } = caseOptions({ seconds: 5, rounds: 1 });
const RATE = 10;
const BURST = 10;
requireTools({ wrk: 'wrk', taskset: 'util-linux' });

const stack = await createBenchStack(SERVER_CPU, { RATE_LIMIT_SECRET: `${RATE}:${BURST}` });
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
    targets.map((url) => runWrk(url, { connections: 10, seconds: SECONDS, cpu: LOAD_CPU, headers })),
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
  report({ admitted: admitted / allowed, 'requests admitted': admitted, 'requests sent': total });
} catch (err) {
  console.error(`bench failed: ${(err as Error).stack ?? err}`);
  failed = true;
} finally {
  await stack.stop();
}
process.exit(failed ? 1 : 0);
