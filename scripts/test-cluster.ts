#!/usr/bin/env bun
/**
 * `bun run test:cluster` (`bun run test` runs it last): the tests of what Redis does, again on a three-master Redis
 * Cluster that test/preload.ts starts on free ports and stops (docs/scaling.md#redis). Without redis-server and
 * redis-cli there is no cluster to start: it says so in one line and exits 0.
 */
const FILES = [
  'gateway/test/gateway.test.ts',
  'gateway/test/limits.test.ts',
  'gateway/test/limits-race.test.ts',
  'gateway/test/expiry.test.ts',
  'gateway/test/origins.test.ts',
  'gateway/test/pipeline/limit.test.ts',
  'gateway/test/tiered-cache.test.ts',
  'management-service/test/idempotency.test.ts',
  'storefront-service/test/http.test.ts',
  'storefront-service/test/reads.test.ts',
  'test/cli.test.ts',
  'test/cluster.test.ts',
];

const missing = ['redis-server', 'redis-cli'].filter((bin) => !Bun.which(bin));
if (missing.length) {
  console.log(
    `test:cluster: skipped, ${missing.join(' and ')} absent: no Redis Cluster to run ${FILES.length} files on`,
  );
  process.exit(0);
}
const proc = Bun.spawn(['bun', 'test', '--timeout', '30000', ...FILES], {
  cwd: `${import.meta.dir}/..`,
  env: { ...process.env, TEST_REDIS_CLUSTER: '1' },
  stdio: ['inherit', 'inherit', 'inherit'],
});
// the run's preload stops the cluster on SIGINT or SIGTERM: a terminal's Ctrl-C reaches it too (one process group),
// a SIGTERM for this process is passed on; either way this one waits for it to finish
process.on('SIGINT', () => {});
process.on('SIGTERM', () => proc.kill('SIGTERM'));
process.exit(await proc.exited);
