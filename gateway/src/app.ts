import { log, type Config } from '@studio/shared';
import type { Sql } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';
import { KeyResolver } from './keys/resolver';
import { redisNames } from './keys/channels';
import { RateLimiter } from './forward/ratelimit';
import { ActivityWriter } from './activity/writer';
import { CORS_HEADERS, createSurfaceHandler } from './surface';
import { createDocsHandler } from './docs';
import { createDashboard } from './dashboard';
import { StorefrontCache } from './forward/storefront-cache';
import { publishStorefrontChange } from '@studio/shared/invalidation';

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
  const surfaceDeps = { config, keys, limiter, activity, docs, storefrontCache };

  /**
   * In-process key records are trusted only while the revocation subscription is
   * live; every (re)connect starts from an empty cache, since broadcasts may have
   * been missed while it was down.
   */
  async function subscribe() {
    if (!subscriber) return;
    const down = () => {
      keys.useLocal = false;
      keys.flush();
      storefrontCache.enabled = false;
      storefrontCache.flush();
    };
    subscriber.on('error', down);
    subscriber.on('reconnecting', down);
    subscriber.on('end', down);
    subscriber.on('ready', () => {
      keys.flush();
      keys.useLocal = true;
      storefrontCache.flush();
      storefrontCache.enabled = true;
    });
    try {
      await subscriber.subscribe(names.revokedChannel, (message) => {
        const [nonce, hashes = ''] = message.split(' ');
        for (const hash of hashes.split(',')) keys.evict(hash);
        // confirm to the revoker, which waits for every replica before it returns
        if (nonce) redis?.multi().rPush(names.ack(nonce), '1').expire(names.ack(nonce), 60).exec().catch(() => {});
      });
      // Storefront answers cached here are dropped the moment any writer announces a change
      await subscriber.subscribe(names.invalidateChannel, (studioId) => storefrontCache.drop(studioId));
      keys.flush();
      keys.useLocal = subscriber.isReady;
      storefrontCache.flush();
      storefrontCache.enabled = subscriber.isReady;
    } catch (err) {
      log('warn', 'revocation subscription unavailable; verifying keys against Postgres', { error: String(err) });
    }
  }

  return {
    storefront: createSurfaceHandler('storefront', surfaceDeps),
    management: createSurfaceHandler('management', surfaceDeps),
    dashboard: createDashboard({ config, sql, redis, activity }),
    keys,
    activity,
    storefrontCache,
    async start() {
      activity.start();
      await subscribe();
    },
    async stop() {
      await activity.close();
    },
  };
}
export type Gateway = ReturnType<typeof createGateway>;
