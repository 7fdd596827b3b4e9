import { type Config, channels, type RedisMode, redisMode, redisNames } from '@studio/shared';
import type { Redis } from '@studio/shared/io';
import {
  type Broadcasts,
  broadcastsFor,
  createMetrics,
  createOpsHandler,
  createSql,
  createTracing,
  readinessCheck,
  type Sql,
} from '@studio/shared/io';
import { ActivityWriter } from './activity/writer';
import { pgBroadcastHandlers } from './broadcasts/listen';
import { subscribeBroadcasts, trustMemory } from './broadcasts/subscribe';
import { StorefrontCache } from './cache/storefront';
import { createDocsHandler } from './docs';
import { type KeyCacheOptions, KeyResolver } from './keys/resolver';
import type { BucketStore } from './limits/buckets';
import { MemoryBuckets } from './limits/memory-buckets';
import { RateLimiter } from './limits/rate-limiter';
import { RedisBuckets } from './limits/redis-buckets';
import { GatewayLock } from './lock';
import { gatewayMetrics } from './metrics';
import { createSurface } from './pipeline';
import { surfaceProfiles } from './pipeline/profile';

export interface GatewayDeps {
  config: Config;
  sql: Sql;
  /**
   * Commands: key records, rate limits, revocation markers. Not used in single-node mode
   * (`REDIS_URL=none`, docs/design/single-node.md); in Redis mode null means a Redis that cannot be used (docs/design/gateway.md).
   */
  redis: Redis | null;
  /** A second connection in subscriber mode (revocation and invalidation broadcasts; Redis mode). */
  subscriber: Redis | null;
  /** The in-memory key cache's caps (tests make them small). */
  keyCache?: KeyCacheOptions;
  /** Another gateway took the gateway lock while this one's session was down: main.ts exits (a test's gateway stays paused). */
  onLockRefused?(message: string): void;
}

/**
 * Builds the gateway's handlers (two public surfaces and the operations port); never listens
 * (main.ts and the tests do). Each Redis role has its single-node equivalent (docs/design/single-node.md):
 * buckets in memory, the key cache memory -> Postgres, broadcasts over LISTEN/NOTIFY on the
 * gateway lock's session; `start` takes that lock (exclusive in single-node mode, shared with Redis). Every handler
 * is a Bun.serve `fetch` (docs/design/serving.md).
 */
export function createGateway(deps: GatewayDeps) {
  const { config, sql, subscriber } = deps;
  const mode = redisMode(config);
  const single = mode === 'single-node';
  const redis = single ? null : deps.redis;
  const names = redisNames(config.REDIS_PREFIX);
  const metrics = createMetrics();
  // the activity log's own connection, committing asynchronously (a flush is then two statements, no transaction)
  const activitySql = createSql(config.DATABASE_URL, { max: 1, name: 'gateway-activity', asyncCommit: true });
  const activity = new ActivityWriter(activitySql, config.ACTIVITY_FLUSH_MS);
  const observed = gatewayMetrics(metrics, activity);
  const keys = new KeyResolver(sql, redis, names, countLookups(observed), deps.keyCache);
  const limiter = rateLimiter(config, single ? new MemoryBuckets() : new RedisBuckets(redis, names));
  // single-node: nothing is served until the lock is held (`start`), and again after the lock's session drops
  const state = { draining: false, paused: single };
  // one probe a second for every port's /readyz, whoever asks (docs/design/processes.md)
  const readiness = readinessCheck(sql, single ? 'none' : redis, state);
  const docs = createDocsHandler(config, readiness);
  const bus = broadcastsFor(config, sql, redis);
  const tracing = createTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'gateway');
  const storefrontCache = storefrontCacheOf(config, bus);
  const pipelineDeps = { config, keys, limiter, activity, docs, metrics: observed, tracing, state };
  const lock = gatewayLock(deps, mode, { keys, storefrontCache, state });
  const profiles = surfaceProfiles(config, storefrontCache);
  let stopBroadcasts = () => {};

  return {
    storefront: createSurface(profiles.storefront, pipelineDeps),
    management: createSurface(profiles.management, pipelineDeps),
    ops: createOpsHandler(metrics, readiness),
    mode,
    bus,
    lock,
    keys,
    activity,
    storefrontCache,
    metrics,
    /** Takes the gateway lock first: GatewayLockRefused (nothing started) when another gateway's excludes this one. */
    async start() {
      await lock.start();
      activity.start();
      const heard = { subscriber, redis, channels: channels(config.REDIS_PREFIX), keys, storefrontCache };
      if (!single) stopBroadcasts = await subscribeBroadcasts(heard);
    },
    /** Stopping (SIGTERM): readiness answers 503 from now on, so load balancers send no more work. */
    drain() {
      state.draining = true;
    },
    async stop() {
      stopBroadcasts();
      for (const p of Object.values(profiles)) p.forward.pool.close();
      await activity.close();
      await activitySql.end({ timeout: 5 });
      await tracing?.shutdown();
      await lock.stop();
    },
  };
}
export type Gateway = ReturnType<typeof createGateway>;

/** The Storefront answer cache, bounded in bytes; a write that changes a studio's pages is broadcast to every gateway. */
const storefrontCacheOf = (config: Config, bus: Broadcasts) =>
  new StorefrontCache({
    maxBytes: config.STOREFRONT_CACHE_MB * 1024 * 1024,
    publish: (studioId) => bus.storefrontChanged(studioId),
  });

const rateLimiter = (config: Config, store: BucketStore) =>
  new RateLimiter(store, {
    secret: config.RATE_LIMIT_SECRET,
    publishableClient: config.RATE_LIMIT_PUBLISHABLE_CLIENT,
    publishable: config.RATE_LIMIT_PUBLISHABLE,
    test: config.RATE_LIMIT_TEST,
    unknownKey: config.RATE_LIMIT_UNKNOWN_KEY,
  });

/**
 * The gateway lock (`lock.ts`). In single-node mode its session also hears the broadcasts,
 * memory is trusted only while it holds the lock, and nothing is served while it does not.
 */
function gatewayLock(
  deps: GatewayDeps,
  mode: RedisMode,
  o: { keys: KeyResolver; storefrontCache: StorefrontCache; state: { paused: boolean } },
) {
  const { keys, storefrontCache, state } = o;
  return new GatewayLock({
    url: deps.config.DATABASE_URL,
    mode,
    onRefused: deps.onLockRefused, // logged by the lock either way
    ...(mode === 'single-node' && {
      listen: pgBroadcastHandlers({ sql: deps.sql, keys, storefrontCache }),
      onHeld: () => {
        trustMemory(keys, storefrontCache, true);
        state.paused = false;
      },
      onLost: () => {
        state.paused = true;
        trustMemory(keys, storefrontCache, false);
      },
    }),
  });
}

const LOOKUP_RESULT = { memory: 'memory', stale: 'stale', shared: 'redis', origin: 'postgres' } as const;

/** Counts each key lookup by the tier that answered it (`gateway_key_lookups_total`). */
const countLookups =
  (observed: ReturnType<typeof gatewayMetrics>) =>
  (tier: keyof typeof LOOKUP_RESULT): void =>
    observed.keyLookups({ result: LOOKUP_RESULT[tier] });
