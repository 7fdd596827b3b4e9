import { loadConfig, log, setLogLevel } from '@studio/shared';
import { BUN_BODY_CAP } from '@studio/shared/body';
import { createSql } from '@studio/shared/db';
import { connectRedis, createRedis, quitRedis } from '@studio/shared/redis';
import { createGateway } from './app';

const config = loadConfig();
setLogLevel(config.LOG_LEVEL);
const sql = createSql(config.DATABASE_URL, { max: 20, name: 'gateway' });
const redis = createRedis(config.REDIS_URL, 'gateway redis');
const subscriber = redis.duplicate();
await Promise.all([connectRedis(redis), connectRedis(subscriber)]);

const gateway = createGateway({ config, sql, redis, subscriber });
await gateway.start();

const common = { hostname: config.HOST, maxRequestBodySize: BUN_BODY_CAP, idleTimeout: 30 };
const servers = [
  Bun.serve({ ...common, port: config.STOREFRONT_PORT, fetch: gateway.storefront }),
  Bun.serve({ ...common, port: config.MANAGEMENT_PORT, fetch: gateway.management }),
  Bun.serve({ ...common, port: config.DASHBOARD_PORT, fetch: gateway.dashboard }),
];
log('info', 'gateway listening', { storefront: servers[0]!.url.href, management: servers[1]!.url.href, dashboard: servers[2]!.url.href });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log('info', 'gateway stopping', { signal });
  await Promise.all(servers.map((s) => s.stop()));
  await gateway.stop(); // flushes pending activity entries
  await Promise.all([quitRedis(subscriber), quitRedis(redis), sql.end({ timeout: 5 })]);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
