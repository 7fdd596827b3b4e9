/** Redis names shared by the gateway, the CLI and the dashboard (all under REDIS_PREFIX). */
export const redisNames = (prefix: string) => ({
  /** Cached key record, JSON, keyed by SHA-256 of the key text. */
  record: (hash: string) => `${prefix}key:${hash}`,
  /** Set on revocation and checked on every request, so no replica's cache can outlive it. */
  revoked: (hash: string) => `${prefix}revoked:${hash}`,
  bucket: (name: string) => `${prefix}rl:${name}`,
  /** Pub/sub: a revoked key's hash. */
  revokedChannel: `${prefix}keys:revoked`,
  /** Pub/sub: a studio whose Storefront data changed. */
  invalidateChannel: `${prefix}storefront:invalidate`,
});
export const RECORD_TTL_S = 300;
/** Longer than every cache of a key record (local 60 s, Redis 300 s). */
export const REVOKED_MARKER_TTL_S = 3_600;
