/** The runtime calls `bun run bench:runtime` weighs (scripts/bench/runtime-server.ts makes them). */
export const CALLS = ['none', 'url', 'headers', 'requestIP', 'headers.set', 'hmac'] as const;
export type RuntimeCall = (typeof CALLS)[number];

/** What each call is, and where the gateway makes it. */
export const CALL_NAMES: Record<Exclude<RuntimeCall, 'none'>, string> = {
  url: '`req.url` (every request; the Bun floor reads it too)',
  headers: '`req.headers`, first read, and one `get` (every request: the key)',
  requestIP: "`server.requestIP` (every request: the caller's address, a `getpeername`)",
  'headers.set':
    "three `Headers.set` on a kept `Headers`, and those headers sent (a cached answer's own: request id, traceresponse, RateLimit)",
  hmac: 'an HMAC-SHA256 from a keyed hasher, in hex (every forwarded call: the signature)',
};
