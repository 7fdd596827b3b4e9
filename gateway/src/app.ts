import type { Config } from '@studio/shared';
import type { Sql } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';
import { channels } from '@studio/shared/broadcasts';
import { KeyResolver, type KeyCacheOptions } from './keys/resolver';
import { redisNames } from './keys/redis-names';
import { RateLimiter } from './limits/rate-limiter';
import { ActivityWriter } from './activity/writer';
import { createSurface } from './pipeline';
import { surfaceProfiles } from './pipeline/profile';
import { createDocsHandler } from './docs';
import { createDashboard } from './dashboard';
import { StorefrontCache } from './cache/storefront';
import { publishStorefrontChange } from '@studio/shared/invalidation';
import { subscribeBroadcasts } from './broadcasts/subscribe';
import { createMetrics } from '@studio/shared/metrics';
import { createSpanExporter } from '@studio/shared/otlp';
import { gatewayMetrics } from './metrics';
import { createOpsHandler } from './ops';

export interface GatewayDeps {
  config: Config;
  sql: Sql;
  /** Commands: key records, rate limits, revocation markers. */
  redis: Redis | null;
  /** A second connection in subscriber mode (revocation and invalidation broadcasts). */
  subscriber: Redis | null;
  /** The in-memory key cache's caps (tests make them small). */
  keyCache?: KeyCacheOptions;
}

/** Builds the gateway's handlers (three public surfaces and the operations port); never listens (main.ts and the tests do). */
export function createGateway(deps: GatewayDeps) {
  const { config, sql, redis, subscriber } = deps;
  const names = redisNames(config.REDIS_PREFIX);
  const metrics = createMetrics();
  const activity = new ActivityWriter(sql, config.ACTIVITY_FLUSH_MS);
  const observed = gatewayMetrics(metrics, activity);
  const keys = new KeyResolver(sql, redis, names, (tier) => observed.keyLookups({ result: LOOKUP_RESULT[tier] }), deps.keyCache);
  const limiter = new RateLimiter(redis, names, {
    secret: config.RATE_LIMIT_SECRET,
    publishableClient: config.RATE_LIMIT_PUBLISHABLE_CLIENT,
    publishable: config.RATE_LIMIT_PUBLISHABLE,
    unknownKey: config.RATE_LIMIT_UNKNOWN_KEY,
  });
  const state = { draining: false };
  const docs = createDocsHandler(config, sql, redis, state);
  const spans = createSpanExporter(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'gateway');
  const storefrontCache = new StorefrontCache({
    maxBytes: config.STOREFRONT_CACHE_MB * 1024 * 1024,
    publish: (studioId) => publishStorefrontChange(redis, config.REDIS_PREFIX, studioId),
  });
  const pipelineDeps = { config, keys, limiter, activity, docs, metrics: observed, spans };
  const profiles = surfaceProfiles(config, storefrontCache);

  return {
    storefront: createSurface(profiles.storefront, pipelineDeps),
    management: createSurface(profiles.management, pipelineDeps),
    dashboard: createDashboard({ config, sql, redis, activity, metrics }),
    ops: createOpsHandler(metrics, sql, redis, state),
    keys,
    activity,
    storefrontCache,
    metrics,
    async start() {
      activity.start();
      await subscribeBroadcasts({ subscriber, redis, channels: channels(config.REDIS_PREFIX), keys, storefrontCache });
    },
    /** Stopping (SIGTERM): readiness answers 503 from now on, so load balancers send no more work. */
    drain() {
      state.draining = true;
    },
    async stop() {
      for (const p of Object.values(profiles)) p.forward.pool.close();
      await activity.close();
      await spans?.flush();
      spans?.close();
    },
  };
}
export type Gateway = ReturnType<typeof createGateway>;

const LOOKUP_RESULT = { memory: 'memory', stale: 'stale', shared: 'redis', origin: 'postgres' } as const;
