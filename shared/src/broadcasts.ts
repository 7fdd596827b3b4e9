/**
 * Every Redis pub/sub channel of the platform, named once (all under REDIS_PREFIX): the
 * gateway subscribes to both; the CLI, the dashboard and the gateway itself publish.
 */
export const channels = (prefix: string) => ({
  /** `<nonce> <hash>,<hash>…`: keys whose cached records every gateway drops, then confirms on `ack(nonce)`. */
  keysRevoked: `${prefix}keys:revoked`,
  /** A studio id whose Storefront data changed: every gateway drops its cached Storefront answers of that studio. */
  storefrontChanged: `${prefix}storefront:invalidate`,
  /** The list each gateway pushes to once it applied a `keysRevoked` message; the publisher counts them. */
  ack: (nonce: string) => `${prefix}ack:${nonce}`,
});
export type Channels = ReturnType<typeof channels>;
