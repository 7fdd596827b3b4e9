import { flushLogs, loadConfigOrExit, log, redisMode, setLogLevel, setLogProcess } from '@studio/shared';
import {
  broadcastsFor,
  connectConfiguredRedis,
  createMetrics,
  createOpsHandler,
  createSql,
  createTracing,
  listenOrExit,
  quitRedis,
  readinessCheck,
  SERVE_DEFAULTS,
} from '@studio/shared/io';
import { createDashboard } from './app';

/**
 * The dashboard process (docs/design/dashboard.md): the pages on DASHBOARD_PORT, its `/metrics`, `/healthz` and
 * `/readyz` on DASHBOARD_OPS_PORT. A key change it makes reaches every gateway, with their confirmation, over Redis,
 * or over Postgres NOTIFY in single-node mode (no Redis client at all then).
 */
setLogProcess('dashboard'); // before anything logs: every line names its process
const config = loadConfigOrExit();
setLogLevel(config.LOG_LEVEL);
const POOL_MAX = 10;
const sql = createSql(config.DATABASE_URL, { max: POOL_MAX, name: 'dashboard' });
const redis = await connectConfiguredRedis(config, 'dashboard redis');
const metrics = createMetrics();
metrics.gauge('studio_db_pool_max_connections', 'Connections the Postgres pool may open.', () => POOL_MAX);
const tracing = createTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'dashboard');
const state = { draining: false };
const readiness = readinessCheck(sql, redisMode(config) === 'single-node' ? 'none' : redis, state);
const bus = broadcastsFor(config, sql, redis);
const dashboard = createDashboard({ config, sql, readiness, bus, redis, metrics, tracing });

// production mode on both ports (no development error pages), a problem+json 500 as the last resort
const common = { ...SERVE_DEFAULTS, hostname: config.HOST, idleTimeout: 30 };
const server = listenOrExit('DASHBOARD_PORT', config.DASHBOARD_PORT, () =>
  Bun.serve({ ...common, port: config.DASHBOARD_PORT, fetch: dashboard }),
);
const ops = listenOrExit('DASHBOARD_OPS_PORT', config.DASHBOARD_OPS_PORT, () =>
  Bun.serve({ ...common, port: config.DASHBOARD_OPS_PORT, fetch: createOpsHandler(metrics, readiness) }),
);
log('info', 'dashboard listening', { mode: redisMode(config), dashboard: server.url.href, ops: ops.url.href });

/** In-flight requests get this long to finish once the dashboard stops accepting. */
const DRAIN_MS = 10_000;
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log('info', 'dashboard draining', { signal });
  state.draining = true; // readiness 503 on both ports from now on
  await Promise.race([server.stop(), Bun.sleep(DRAIN_MS).then(() => server.stop(true))]);
  await tracing?.shutdown();
  ops.stop(true);
  await Promise.all([quitRedis(redis), sql.end({ timeout: 5 })]);
  flushLogs();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
