import { type Config, redisMode } from '../../config';
import type { Sql } from '../db';
import { gatewaysHolding } from '../gateway-lock';
import { notifyStorefrontChange, publishStorefrontChange } from '../invalidation';
import type { Redis } from '../redis';
import { broadcastEviction } from './eviction';
import { notifyEviction } from './notify';

/**
 * How any process (the gateway, its dashboard, the CLI) tells every gateway that keys or a
 * studio's Storefront data changed: one interface, two implementations. Over Redis pub/sub
 * (`redisBroadcasts`), or, in single-node mode, over Postgres NOTIFY (`postgresBroadcasts`,
 * docs/design/single-node.md), with the same confirmation docs/design/keys.md demands of a revocation.
 */
export interface Broadcasts {
  /**
   * Every gateway drops its cached records of these keys, and confirms: true once each one that
   * heard it did, so no replica answers from a stale record after this returns. `revoked` also
   * marks the keys for the Redis rate-limit script, which refuses them on any replica.
   */
  evictKeys(hashes: string[], o: { revoked: boolean }): Promise<boolean>;
  /** Every gateway drops its cached Storefront answers of a studio. Best effort: the cache's 5 s lifetime bounds staleness. */
  storefrontChanged(studioId: string): Promise<void>;
}

/**
 * A Redis that is down (or null) confirms nothing: false, and every gateway verifies keys in Postgres meanwhile
 * (docs/design/gateway.md). With `sql`, every gateway running against the database must confirm, not only those the
 * broadcast reached.
 */
export const redisBroadcasts = (redis: Redis | null, prefix: string, sql?: Sql): Broadcasts => ({
  evictKeys: (hashes, o) => broadcastEviction(redis, prefix, hashes, o, sql && (() => gatewaysHolding(sql))),
  storefrontChanged: (studioId) => publishStorefrontChange(redis, prefix, studioId),
});

export const postgresBroadcasts = (sql: Sql): Broadcasts => ({
  evictKeys: (hashes) => notifyEviction(sql, hashes),
  storefrontChanged: (studioId) => notifyStorefrontChange(sql, studioId),
});

/** The process's broadcasts as configured: Postgres in single-node mode, else Redis (`redis` null or down: degraded). */
export const broadcastsFor = (
  config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_PREFIX'>,
  sql: Sql,
  redis: Redis | null,
): Broadcasts =>
  redisMode(config) === 'single-node' ? postgresBroadcasts(sql) : redisBroadcasts(redis, config.REDIS_PREFIX, sql);
