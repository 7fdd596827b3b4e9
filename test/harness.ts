/**
 * A whole stack per test file, in-process but over real HTTP: its own database
 * (cloned from the migrated template), its own Redis namespace, both services and
 * the gateway listening on free ports. Nothing is mocked.
 */

import { createApiKey, revokeApiKey } from '@studio/control';
import { createDashboard } from '@studio/dashboard';
import { createGateway, type Gateway } from '@studio/gateway';
import { createManagementService } from '@studio/management-service';
import { type Config, type KeyKind, loadConfig, randomBase62, type Scope } from '@studio/shared';
import {
  type Broadcasts,
  broadcastsFor,
  connectRedis,
  createMetrics,
  createOpsHandler,
  createRedis,
  createSql,
  createTracing,
  deleteByPrefix,
  type Metrics,
  quitRedis,
  type Redis,
  readinessCheck,
  SERVE_DEFAULTS,
  type ServedApp,
  type Sql,
  serveService,
} from '@studio/shared/io';
import { createStorefrontService } from '@studio/storefront-service';
import postgres from 'postgres';
import { createStudio, deleteStudio, type StudioInput } from '../scripts/lib/studios';
import { checkedSurfaces } from './documented';

/**
 * The two ways replicas agree (docs/design/single-node.md), for tests that run against both: with Redis
 * (`bun run test:cluster` runs those on a Redis Cluster, so single-node is not repeated there),
 * and single-node mode (`REDIS_URL=none`).
 */
export const MODES: readonly Mode[] = process.env.TEST_REDIS_CLUSTER_NODES ? ['redis'] : ['redis', 'single-node'];
export type Mode = 'redis' | 'single-node';
/** A stack's options for a mode. */
export const inMode = (mode: Mode, options: StackOptions = {}): StackOptions =>
  mode === 'single-node' ? { ...options, redis: 'none' } : options;

type Fetch = (req: Request, server: Bun.Server<undefined>) => Response | Promise<Response>;

/** A gateway port on a free port, as main.ts serves each. */
export const serveSurface = (fetch: Fetch) =>
  Bun.serve({ ...SERVE_DEFAULTS, hostname: '127.0.0.1', port: 0, idleTimeout: 30, fetch });

/** What a single-node stack has instead of Redis: any use fails the test and says why. */
const NO_REDIS = new Proxy(
  {},
  {
    get: (_, prop) => {
      if (prop === 'isReady' || prop === 'isOpen') return false;
      throw new Error(`a single-node stack has no Redis (s.redis.${String(prop)})`);
    },
  },
) as Redis;

export interface StackOptions {
  /** `none`: single-node mode (REDIS_URL=none): no Redis anywhere, every role in memory or Postgres. */
  redis?: 'none';
  /** Point the gateway (only) at another Redis, e.g. a dead one. */
  gatewayRedisUrl?: string;
  env?: Record<string, string>;
  /** Applied to the gateway's configuration only (e.g. a dead or slow service URL). */
  gatewayEnv?: Record<string, string>;
}

export interface Stack {
  mode: Mode;
  config: Config;
  sql: Sql;
  /** The stack's Redis (single-node: none, and any use throws). */
  redis: Redis;
  /** How key changes and Storefront changes reach the gateway: Redis, or Postgres in single-node mode. */
  bus: Broadcasts;
  gateway: Gateway;
  /** Gateway surfaces. */
  storefrontUrl: string;
  managementUrl: string;
  /** The dashboard process's pages (its own app, as dashboard/src/main.ts serves it, beside the gateway). */
  dashboardUrl: string;
  /** The dashboard's operations port: /metrics, /healthz, /readyz. */
  dashboardOpsUrl: string;
  /** The gateway's operations port: /metrics, /healthz, /readyz. */
  opsUrl: string;
  /** Services' own ports (for the "skipping the gateway" tests). */
  storefrontServiceUrl: string;
  managementServiceUrl: string;
  databaseName: string;
  /** The services' and the dashboard's metrics (what their `/metrics` shows). */
  metrics: { storefront: Metrics; management: Metrics; dashboard: Metrics };
  studio(input?: Partial<StudioInput>): Promise<{ id: string; adminId: string }>;
  key(
    studioId: string,
    kind: KeyKind,
    scopes?: Scope[] | readonly Scope[],
    name?: string,
  ): Promise<{ key: string; id: string }>;
  revoke(keyId: string): Promise<void>;
  deleteStudio(studioId: string): Promise<void>;
  /** fetch against a gateway surface with a key. */
  sf(path: string, key: string | null, init?: RequestInit): Promise<Response>;
  mg(path: string, key: string | null, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

const bearer = (key: string | null, init: RequestInit = {}): RequestInit => {
  const headers = new Headers(init.headers);
  if (key !== null) headers.set('authorization', `Bearer ${key}`);
  return { ...init, headers };
};

/** A database of its own for one stack, made from the migrated template (fast: a file copy). */
async function freshDatabase(baseUrl: string): Promise<{ databaseName: string; dbUrl: URL }> {
  const databaseName = `studio_t_${randomBase62(10).toLowerCase()}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${databaseName} template ${process.env.TEST_TEMPLATE_DB}`);
  await admin.end();
  const dbUrl = new URL(baseUrl);
  dbUrl.pathname = `/${databaseName}`;
  return { databaseName, dbUrl };
}

/** A stack's environment: its database, Redis (or none) under its own prefix, fresh secrets, generous limits. */
function stackEnv(dbUrl: URL, prefix: string, single: boolean, env: Record<string, string> = {}) {
  return {
    DATABASE_URL: dbUrl.href,
    REDIS_URL: single ? 'none' : process.env.TEST_REDIS_URL!,
    // set by test/preload.ts when the suite runs on a Redis Cluster (`bun run test:cluster`)
    REDIS_CLUSTER_NODES: single ? '' : (process.env.TEST_REDIS_CLUSTER_NODES ?? ''),
    REDIS_PREFIX: prefix,
    GATEWAY_SECRET: `test-gateway-${randomBase62(16)}`,
    DASHBOARD_SECRET: `test-dashboard-${randomBase62(16)}`,
    CURSOR_SECRET: `test-cursor-${randomBase62(16)}`,
    RATE_LIMIT_SECRET: '1000:2000',
    RATE_LIMIT_PUBLISHABLE_CLIENT: '1000:2000',
    RATE_LIMIT_PUBLISHABLE: '1000:2000',
    RATE_LIMIT_TEST: '1000:2000',
    // every test calls from 127.0.0.1, and several walk unknown keys across the whole table
    RATE_LIMIT_UNKNOWN_KEY: '1000:2000',
    UPSTREAM_TIMEOUT_MS: '10000',
    ...env,
  };
}

/** The gateway's Redis (the stack's, unless `gatewayRedisUrl` names another) and its subscriber, connected. */
async function gatewayRedisOf(options: StackOptions, config: Config, redis: Redis, single: boolean) {
  if (single) return { gwRedis: null, subscriber: null };
  const url = options.gatewayRedisUrl ?? config.REDIS_URL;
  const gwRedis = url === config.REDIS_URL ? redis : createRedis(url, 'test gateway redis');
  const subscriber = gwRedis.duplicate();
  subscriber.on('error', () => {});
  await Promise.all([gwRedis === redis ? null : connectRedis(gwRedis), connectRedis(subscriber)]);
  return { gwRedis, subscriber };
}

/**
 * The gateway's three ports on free ports, as main.ts serves them, answering through the
 * gateway `holder` holds once it is made: the gateway needs its own public addresses, known only after listening.
 * The dashboard's two (dashboard/src/main.ts) likewise: its pages need the gateway's addresses, and it its own.
 */
function gatewayPorts(holder: { gw?: Gateway; dashboard?: Fetch; dashboardOps?: Fetch }) {
  const listen = (pick: () => Fetch) => serveSurface((req, server) => pick()(req, server));
  const servers = [
    listen(() => holder.gw!.storefront),
    listen(() => holder.gw!.management),
    listen(() => holder.dashboard!),
    listen(() => holder.gw!.ops),
    listen(() => holder.dashboardOps!),
  ];
  const [sfUrl, mgUrl, dbUrlPublic, opsUrl, dashboardOpsUrl] = servers.map((s) => `http://127.0.0.1:${s.port}`) as [
    string,
    string,
    string,
    string,
    string,
  ];
  return { servers, sfUrl, mgUrl, dbUrlPublic, opsUrl, dashboardOpsUrl };
}

/** The services, each on a free port, as their own processes serve them. */
function startServices(config: Config, sql: Sql, appRedis: Redis | null) {
  const metrics = { storefront: createMetrics(), management: createMetrics() };
  const serve = (app: ServedApp, surface: 'storefront' | 'management') =>
    serveService(app, {
      name: `${surface}-service`,
      surface,
      config,
      metrics: metrics[surface],
      hostname: '127.0.0.1',
      port: 0,
    });
  const storefrontApp = serve(createStorefrontService({ config, sql, redis: appRedis }), 'storefront');
  const managementApp = serve(
    createManagementService({ config, sql, redis: appRedis, metrics: metrics.management }),
    'management',
  );
  return { metrics, storefrontApp, managementApp };
}

/** What a test asks of a stack: studios and keys made and ended as the product makes them, and calls to its ports. */
function stackCalls(
  sql: Sql,
  bus: Broadcasts,
  sfUrl: string,
  mgUrl: string,
): Pick<Stack, 'studio' | 'key' | 'revoke' | 'deleteStudio' | 'sf' | 'mg'> {
  return {
    async studio(input = {}) {
      const r = await createStudio(sql, { name: 'Test Studio', ...input });
      return { id: r.studio.id as string, adminId: r.admin.id as string };
    },
    async key(studioId, kind, scopes = [], name = 'test') {
      const r = await createApiKey(sql, { studioId, kind, name, scopes: [...scopes] });
      return { key: r.key, id: r.record.id };
    },
    async revoke(keyId) {
      await revokeApiKey(sql, bus, keyId);
    },
    async deleteStudio(studioId) {
      await deleteStudio(sql, bus, studioId);
    },
    sf: (path, key, init) => fetch(sfUrl + path, bearer(key, init)),
    mg: (path, key, init) => fetch(mgUrl + path, bearer(key, init)),
  };
}

/**
 * The dashboard process, as its main.ts builds it, served on the holder's ports: its own readiness, metrics and
 * broadcasts (Redis, or Postgres), and spans going out as the process's would when the stack names
 * OTEL_EXPORTER_OTLP_ENDPOINT (else no tracing).
 */
function dashboardOf(
  holder: Parameters<typeof gatewayPorts>[0],
  config: Config,
  sql: Sql,
  bus: Broadcasts,
  redis: Redis | null,
) {
  const dashboardMetrics = createMetrics();
  const readiness = readinessCheck(sql, redis ?? 'none');
  const dashboardTracing = createTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'dashboard');
  holder.dashboard = createDashboard({
    config,
    sql,
    readiness,
    bus,
    redis,
    metrics: dashboardMetrics,
    tracing: dashboardTracing,
  });
  holder.dashboardOps = createOpsHandler(dashboardMetrics, readiness);
  return { dashboardMetrics, dashboardTracing };
}

/**
 * A stack in the mode asked for; with no Redis server to use (TEST_REDIS_URL=none, test/preload.ts), single-node
 * whatever was asked: the tests that need Redis say so with `needs('redis')` (test/needs.ts) and skip.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const baseUrl = process.env.TEST_DATABASE_URL!;
  const { databaseName, dbUrl } = await freshDatabase(baseUrl);
  const prefix = `t_${randomBase62(8)}:`;
  const single = options.redis === 'none' || process.env.TEST_REDIS_URL === 'none';
  if (single && options.gatewayRedisUrl)
    throw new Error("a gateway on a Redis of its own needs a stack with Redis: mark the test needs('redis')");
  const env = stackEnv(dbUrl, prefix, single, options.env);
  let config = loadConfig(env);
  const sql = createSql(config.DATABASE_URL, { max: 10 });
  const redis = single ? NO_REDIS : createRedis(config.REDIS_URL, 'test redis', config.REDIS_CLUSTER_NODES);
  if (!single) await connectRedis(redis);
  const appRedis = single ? null : redis;
  const { metrics, storefrontApp, managementApp } = startServices(config, sql, appRedis);
  const storefrontServiceUrl = storefrontApp.url;
  const managementServiceUrl = managementApp.url;

  const { gwRedis, subscriber } = await gatewayRedisOf(options, config, redis, single);
  const holder: Parameters<typeof gatewayPorts>[0] = {};
  const { servers, sfUrl, mgUrl, dbUrlPublic, opsUrl, dashboardOpsUrl } = gatewayPorts(holder);
  checkedSurfaces.set(sfUrl, 'storefront');
  checkedSurfaces.set(mgUrl, 'management');
  config = loadConfig({
    ...env,
    STOREFRONT_SERVICE_URL: storefrontServiceUrl,
    MANAGEMENT_SERVICE_URL: managementServiceUrl,
    STOREFRONT_PUBLIC_URL: sfUrl,
    MANAGEMENT_PUBLIC_URL: mgUrl,
    DASHBOARD_PUBLIC_URL: dbUrlPublic,
    ...options.gatewayEnv,
  });
  const gateway = createGateway({ config, sql, redis: gwRedis, subscriber });
  holder.gw = gateway;
  await gateway.start();
  const bus = broadcastsFor(config, sql, appRedis);
  const { dashboardMetrics, dashboardTracing } = dashboardOf(holder, config, sql, bus, appRedis);

  return {
    mode: single ? 'single-node' : 'redis',
    config,
    sql,
    redis,
    bus,
    gateway,
    databaseName,
    metrics: { ...metrics, dashboard: dashboardMetrics },
    storefrontUrl: sfUrl,
    managementUrl: mgUrl,
    dashboardUrl: dbUrlPublic,
    dashboardOpsUrl,
    opsUrl,
    storefrontServiceUrl,
    managementServiceUrl,
    ...stackCalls(sql, bus, sfUrl, mgUrl),
    async close() {
      // a later stack may get these ports for another surface (all test files share one process)
      checkedSurfaces.delete(sfUrl);
      checkedSurfaces.delete(mgUrl);
      for (const s of servers) s.stop(true);
      await gateway.stop();
      await dashboardTracing?.shutdown();
      await storefrontApp.stop();
      await managementApp.stop();
      if (redis.isReady) await deleteByPrefix(redis, prefix);
      await Promise.all([
        quitRedis(subscriber),
        gwRedis === redis ? null : quitRedis(gwRedis),
        quitRedis(appRedis),
        sql.end({ timeout: 2 }),
      ]);
      const a = postgres(baseUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${databaseName} with (force)`);
      await a.end();
    },
  };
}

/**
 * Before another gateway process starts on a stack's database: single-node, a database has one gateway
 * (docs/design/single-node.md), so the stack's own gives up its lock and serves no more; with Redis, nothing to do.
 */
export async function makeRoomForAGateway(s: Stack) {
  if (s.mode === 'single-node') await s.gateway.lock.stop();
}

/** What a stack's `/readyz` says of Redis: `up`, or `none` single-node. */
export const redisCheck = (s: Stack) => (s.mode === 'redis' ? 'up' : 'none');

/** A problem+json response with this status and code. */
export async function expectProblem(res: Response, status: number, code: string) {
  const text = await res.text();
  const ctx = `${res.status} ${text}`;
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${ctx}`);
  if (!res.headers.get('content-type')?.startsWith('application/problem+json'))
    throw new Error(`expected problem+json, got ${res.headers.get('content-type')}: ${ctx}`);
  const body = JSON.parse(text);
  if (body.code !== code) throw new Error(`expected code ${code}, got ${ctx}`);
  if (body.status !== status) throw new Error(`body status ${body.status} != ${status}`);
  return body as Record<string, unknown>;
}
