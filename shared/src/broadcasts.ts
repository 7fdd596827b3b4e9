/**
 * Every broadcast channel of the platform, named once: Redis pub/sub channels under
 * REDIS_PREFIX, or, in single-node mode (docs/design/single-node.md), Postgres LISTEN/NOTIFY channels
 * (`pgChannels`). The gateway listens to both; the CLI, the dashboard and the gateway itself publish.
 */
export const channels = (prefix: string) => ({
  /** `<nonce> <hash>,<hash>…`: keys whose cached records every gateway drops, then confirms on `ack(nonce)`. */
  keysRevoked: `${prefix}keys:revoked`,
  /** A studio id whose Storefront data changed: every gateway drops its cached Storefront answers of that studio. */
  storefrontChanged: `${prefix}storefront:invalidate`,
  /** Where each gateway confirms once it applied a `keysRevoked` message (Redis: a list it pushes to; Postgres: a NOTIFY); the publisher counts them. */
  ack: (nonce: string) => `${prefix}ack:${nonce}`,
});
export type Channels = ReturnType<typeof channels>;
/** The channels over Postgres: the database is their namespace, so they carry no prefix (and stay within Postgres's 63-byte names). */
export const pgChannels: Channels = channels('');
