/**
 * A dispatcher alone in its own process, for the tests that kill one (`bun test/webhooks/dispatcher-child.ts`):
 * the configuration from the environment as every process reads it, plus the test's short time
 * limit, lease and schedule (TEST_TIMEOUT_MS, TEST_LEASE_MS). Prints "ready" once it runs.
 */

import { createDispatcher } from '@studio/management-service/webhooks';
import { loadConfig } from '@studio/shared';
import { createSql } from '@studio/shared/io';

const config = loadConfig();
const sql = createSql(config.DATABASE_URL, { max: 5, name: 'test dispatcher' });
const dispatcher = createDispatcher({
  sql,
  config,
  pollMs: 200,
  retryScheduleMs: [200, 200, 200, 200],
  timeoutMs: Number(process.env.TEST_TIMEOUT_MS ?? 10_000),
  leaseMs: Number(process.env.TEST_LEASE_MS ?? 30_000),
});
dispatcher.start();
console.log('ready');
process.on('SIGTERM', async () => {
  await dispatcher.stop();
  await sql.end({ timeout: 2 });
  process.exit(0);
});
