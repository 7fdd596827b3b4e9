/** The runtime calls `bun run bench:runtime` weighs (scripts/bench/runtime-server.ts makes them). */
export const CALLS = [
  'none',
  'url',
  'headers',
  'requestIP',
  'headers.set',
  'hmac',
  'cached',
  'listen',
  'llhttp',
  'llhttp-fetch',
] as const;
export type RuntimeCall = (typeof CALLS)[number];

/** What each call is, and where the gateway makes it. */
export const CALL_NAMES: Record<Exclude<RuntimeCall, 'none'>, string> = {
  url: '`req.url` (every request; the Bun floor reads it too)',
  headers: '`req.headers`, first read, and one `get` (every request: the key)',
  requestIP: "`server.requestIP` (every request: the caller's address, a `getpeername`)",
  'headers.set':
    "three `Headers.set` on a kept `Headers`, and those headers sent (a cached answer's own: request id, traceresponse, RateLimit)",
  hmac: 'an HMAC-SHA256 from a keyed hasher, in hex (every forwarded call: the signature)',
  cached:
    "every runtime call a cached read makes, together: `req.url`, six `Headers.get`, `requestIP` and the three `Headers.set` (the gateway's cached read with none of its own logic)",
  listen:
    "the same reads and answer headers on a hand-written HTTP/1.1 front (`Bun.listen`): the request parsed in JavaScript, the caller's address read once a connection, the answer written as bytes",
  llhttp:
    "the same front with the request parsed by llhttp, the parser Bun builds in (`process.binding('http_parser')`, Node's `HTTPParser`), not by code of our own",
  'llhttp-fetch':
    'the llhttp front handing the pipeline a `Request` and writing out a `Response` (its headers read back): a front that keeps the fetch types',
};
