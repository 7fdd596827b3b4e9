import type { Config } from '@studio/shared';
import type { Sql } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';
import { KeyResolver } from './keys/resolver';
import { redisNames } from './keys/channels';
import { RateLimiter } from './forward/ratelimit';
import { ActivityWriter } from './activity/writer';
import { createSurface } from './pipeline';
import { CORS_HEADERS, surfaceProfiles } from './pipeline/profile';
import { createDocsHandler } from './docs';
import { createDashboard } from './dashboard';
import { StorefrontCache } from './forward/storefront-cache';
import { publishStorefrontChange } from '@studio/shared/invalidation';
import { subscribeBroadcasts } from './broadcasts';

export interface GatewayDeps {
  config: Config;
  sql: Sql;
  /** Commands: key records, rate limits, revocation markers. */
  redis: Redis | null;
  /** A second connection in subscriber mode (revocation and invalidation broadcasts). */
  subscriber: Redis | null;
}

/** Builds the gateway's three handlers; never listens (main.ts and the tests do). */
export function createGateway(deps: GatewayDeps) {
  const { config, sql, redis, subscriber } = deps;
  const names = redisNames(config.REDIS_PREFIX);
  const keys = new KeyResolver(sql, redis, names);
  const limiter = new RateLimiter(redis, names, {
    secret: config.RATE_LIMIT_SECRET,
    publishableClient: config.RATE_LIMIT_PUBLISHABLE_CLIENT,
    publishable: config.RATE_LIMIT_PUBLISHABLE,
  });
  const activity = new ActivityWriter(sql, config.ACTIVITY_FLUSH_MS);
  const docs = createDocsHandler(config, sql, redis);
  const storefrontCache = new StorefrontCache({ headers: CORS_HEADERS, publish: (studioId) => publishStorefrontChange(redis, config.REDIS_PREFIX, studioId) });
  const pipelineDeps = { config, keys, limiter, activity, docs };
  const profiles = surfaceProfiles(config, storefrontCache);

  return {
    storefront: createSurface(profiles.storefront, pipelineDeps),
    management: createSurface(profiles.management, pipelineDeps),
    dashboard: createDashboard({ config, sql, redis, activity }),
    keys,
    activity,
    storefrontCache,
    async start() {
      activity.start();
      await subscribeBroadcasts({ subscriber, redis, names, keys, storefrontCache });
    },
    async stop() {
      for (const p of Object.values(profiles)) p.forward.pool.close();
      await activity.close();
    },
  };
}
export type Gateway = ReturnType<typeof createGateway>;
