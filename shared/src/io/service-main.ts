/**
 * The whole of a service's main.ts: configuration, clients, the app, the server with
 * its metrics, traces and access log, and a graceful stop on SIGTERM / SIGINT.
 */
import type { Elysia } from 'elysia';
import { type Config, loadConfigOrExit } from '../config';
import { flushLogs, log, setLogLevel, setLogProcess } from '../http';
import type { Surface } from '../operations';
import { createSql, type Sql } from './db';
import { createMetrics, type Metrics } from './metrics';
import { connectConfiguredRedis, quitRedis, type Redis } from './redis';
import { listenOrExit, serveService } from './serve';

const POOL_MAX = 20;

// biome-ignore lint/suspicious/noExplicitAny: any service's app; Elysia's seven type parameters differ per service
type AnyElysia = Elysia<any, any, any, any, any, any, any>;

export async function runService(o: {
  name: string;
  surface: Surface;
  /** The variable of its port (a port in use stops it with a line naming this). */
  port: 'STOREFRONT_SERVICE_PORT' | 'MANAGEMENT_SERVICE_PORT';
  build: (deps: { config: Config; sql: Sql; redis: Redis | null; metrics: Metrics }) => AnyElysia;
  /** Work the process does beside answering requests (management-service: the webhook dispatcher), started once it listens and drained with it. */
  background?: (deps: { config: Config; sql: Sql; metrics: Metrics }) => { stop(): Promise<void> };
}) {
  setLogProcess(o.name); // before anything logs: every line names its process
  const config = loadConfigOrExit();
  setLogLevel(config.LOG_LEVEL);
  const sql = createSql(config.DATABASE_URL, { max: POOL_MAX, name: o.name });
  const redis = await connectConfiguredRedis(config, `${o.name} redis`); // null in single-node mode (docs/design/single-node.md)
  const metrics = createMetrics();
  metrics.gauge('studio_db_pool_max_connections', 'Connections the Postgres pool may open.', () => POOL_MAX);
  const app = o.build({ config, sql, redis, metrics });
  const port = config[o.port];
  const served = listenOrExit(o.port, port, () =>
    serveService(app, { name: o.name, surface: o.surface, config, metrics, hostname: config.HOST, port }),
  );
  log('info', `${o.name} listening`, { url: served.url });
  const background = o.background?.({ config, sql, metrics });

  let stopping = false;
  async function shutdown(signal: string) {
    if (stopping) return;
    stopping = true;
    log('info', `${o.name} draining`, { signal });
    await Promise.all([served.drain(), background?.stop()]);
    await Promise.all([quitRedis(redis), sql.end({ timeout: 5 })]);
    flushLogs();
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
