import { loadConfig, log, setLogLevel } from '@studio/shared';
import { BUN_BODY_CAP } from '@studio/shared/body';
import { createSql } from '@studio/shared/db';
import { connectRedis, createRedis, quitRedis } from '@studio/shared/redis';
import { createManagementService } from './app';

const config = loadConfig();
setLogLevel(config.LOG_LEVEL);
const sql = createSql(config.DATABASE_URL, { max: 20, name: 'management-service' });
const redis = createRedis(config.REDIS_URL, 'management redis');
await connectRedis(redis);
const app = createManagementService({ config, sql, redis }).listen({ hostname: config.HOST, port: config.MANAGEMENT_SERVICE_PORT, maxRequestBodySize: BUN_BODY_CAP });
log('info', 'management-service listening', { url: `http://${config.HOST}:${app.server?.port}` });

async function shutdown() {
  await app.stop();
  await Promise.all([quitRedis(redis), sql.end({ timeout: 5 })]);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
