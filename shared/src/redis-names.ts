/** Redis keys of an API key, shared by the gateway, the CLI and the dashboard (all under REDIS_PREFIX; channels: `shared/src/broadcasts.ts`). */
export const redisNames = (prefix: string) => ({
  // Every key of one API key shares the hash tag `{hash}`: on a Redis Cluster the scripts that read
  // several of them at once (rate limits with the revoked marker; a record with its stale marker)
  // find them all in one slot.
  /** Cached key record, JSON, keyed by SHA-256 of the key text. */
  record: (hash: string) => `${prefix}key:{${hash}}`,
  /** Set on revocation and checked on every request, so no replica's cache can outlive it. */
  revoked: (hash: string) => `${prefix}revoked:{${hash}}`,
  /** Set on every eviction; a gateway never re-caches a record in Redis while it exists. */
  stale: (hash: string) => `${prefix}stale:{${hash}}`,
  /** A token bucket of the key (one of a publishable key's per client, or its overall one). */
  bucket: (hash: string, name: string) => `${prefix}rl:{${hash}}:${name}`,
});
export const RECORD_TTL_S = 300;
/** Longer than any key lookup can be in flight. */
export const STALE_MARKER_TTL_S = 60;
/** Longer than every cache of a key record (local 60 s, Redis 300 s). */
export const REVOKED_MARKER_TTL_S = 3_600;
