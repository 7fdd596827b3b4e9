import { flushLogs, loadConfigOrExit, log, setLogLevel, setLogProcess } from '@studio/shared';
import {
  connectConfiguredRedis,
  connectRedis,
  createSql,
  listenOrExit,
  quitRedis,
  SERVE_DEFAULTS,
} from '@studio/shared/io';
import { createGateway } from './app';
import { GatewayLockRefused } from './lock';

setLogProcess('gateway'); // before anything logs: every line names its process
const config = loadConfigOrExit();
setLogLevel(config.LOG_LEVEL);
const sql = createSql(config.DATABASE_URL, { max: 20, name: 'gateway' });
// single-node mode (REDIS_URL=none, docs/design/single-node.md): no Redis client at all
const redis = await connectConfiguredRedis(config, 'gateway redis');
const subscriber = redis?.duplicate() ?? null;
if (subscriber) await connectRedis(subscriber);

// another gateway that took the lock while this one's session was down: this one stops
const gateway = createGateway({ config, sql, redis, subscriber, onLockRefused: () => void shutdown('lock lost', 1) });
try {
  await gateway.start(); // the gateway lock first: a second single-node gateway stops here
} catch (err) {
  if (!(err instanceof GatewayLockRefused)) throw err;
  console.error(`error: ${err.message}`);
  await Promise.all([quitRedis(subscriber), quitRedis(redis), sql.end({ timeout: 1 })]);
  process.exit(1);
}

// production mode on every port (no development error pages), a problem+json 500 as the last resort
const common = { ...SERVE_DEFAULTS, hostname: config.HOST, idleTimeout: 30 };
type Fetch = (req: Request, server: Bun.Server<undefined>) => Response | Promise<Response>;
type Port = 'STOREFRONT_PORT' | 'MANAGEMENT_PORT' | 'OPS_PORT';
const listen = (variable: Port, fetch: Fetch) =>
  listenOrExit(variable, config[variable], () => Bun.serve({ ...common, port: config[variable], fetch }));
const servers = [listen('STOREFRONT_PORT', gateway.storefront), listen('MANAGEMENT_PORT', gateway.management)];
const ops = listen('OPS_PORT', gateway.ops);
log('info', 'gateway listening', {
  mode: gateway.mode,
  storefront: servers[0]!.url.href,
  management: servers[1]!.url.href,
  ops: ops.url.href,
});

/** In-flight requests get this long to finish once the gateway stops accepting. */
const DRAIN_MS = 10_000;
let stopping = false;
async function shutdown(signal: string, code = 0) {
  if (stopping) return;
  stopping = true;
  log('info', 'gateway draining', { signal });
  gateway.drain(); // readiness 503 on every port from now on
  await Promise.race([
    Promise.all(servers.map((s) => s.stop())),
    Bun.sleep(DRAIN_MS).then(() => servers.forEach((s) => s.stop(true))),
  ]);
  await gateway.stop(); // flushes pending activity entries and spans
  ops.stop(true);
  await Promise.all([quitRedis(subscriber), quitRedis(redis), sql.end({ timeout: 5 })]);
  flushLogs();
  process.exit(code);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
