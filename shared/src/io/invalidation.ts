import { channels, pgChannels } from '../broadcasts';
import type { Sql } from './db';
import { bounded, type Redis, redisUsable } from './redis';

/** Tell every gateway to drop its cached Storefront responses of a studio. Best effort. */
export async function publishStorefrontChange(redis: Redis | null, prefix: string, studioId: string): Promise<void> {
  if (!redisUsable(redis)) return;
  try {
    await bounded(redis, redis.publish(channels(prefix).storefrontChanged, studioId));
  } catch {
    /* the gateway's short cache lifetime bounds staleness when Redis is down */
  }
}

/** The same over Postgres NOTIFY (single-node mode, docs/design/single-node.md). Best effort too. */
export async function notifyStorefrontChange(sql: Sql, studioId: string): Promise<void> {
  try {
    await sql.notify(pgChannels.storefrontChanged, studioId);
  } catch {
    /* as above: the cache's lifetime bounds staleness */
  }
}
