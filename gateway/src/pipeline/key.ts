import { hashKey, parseKey } from '@studio/shared';
import { type KeyResolver, LookupRefused } from '../keys/resolver';
import type { LimitResult, RateLimiter } from '../limits/rate-limiter';
import { type Ctx, clientAddressOf, type KeyLookup, type KeyStepResult } from './context';

const MISSING: KeyLookup = { problem: 'api_key_missing' };
const INVALID: KeyLookup = { problem: 'api_key_invalid' };
const UNKNOWN: KeyLookup = { rec: null };

const then = <T, R>(v: T | Promise<T>, next: (v: T) => R): R | Promise<R> =>
  v instanceof Promise ? v.then(next) : next(v);
const HEADERS_MAX = 10_000;
/** Longer Authorization headers are not memoised: 10,000 of them at 16 KB would hold 160 MB. */
const HEADER_KEPT_MAX = 128;
const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Step 3: the key behind the Authorization header. Format and checksum are checked
 * before any lookup; the record comes from the resolver's memory when it can be
 * trusted (synchronously), else from Redis or Postgres. A lookup that fails (the
 * database is down) rejects: the pipeline answers 503.
 *
 * With a limiter, unknown keys are limited per client address (RATE_LIMIT_UNKNOWN_KEY):
 * each one known unknown from memory, and each lookup that must ask Postgres, spends one
 * of the address's tokens; an address over its limit is refused before any lookup.
 */
export function keyStep(keys: KeyResolver, limiter?: RateLimiter, trusted: ReadonlySet<string> = new Set()) {
  /** Header -> key hash: a site's visitors all send the same header, so it is parsed and hashed once. */
  const hashes = new Map<string, string>();

  function hashOf(header: string): string | null {
    const known = hashes.get(header);
    if (known) return known;
    const m = BEARER.exec(header);
    if (!m || !parseKey(m[1]!)) return null;
    const hash = hashKey(m[1]!);
    // a header as a client sends it is short; one padded with spaces (16 KB a call) is hashed, never kept
    if (header.length > HEADER_KEPT_MAX) return hash;
    if (hashes.size >= HEADERS_MAX) hashes.clear();
    hashes.set(header, hash);
    return hash;
  }

  const refusedOr = (l: LimitResult | null, otherwise: KeyStepResult): KeyStepResult =>
    l && !l.allowed ? { limited: l } : otherwise;

  /** Spends a token before Postgres is asked (refusing the lookup when the address has none left); a key found gives it back. */
  function lookup(hash: string, client: string): Promise<KeyStepResult> {
    let charged = false;
    const gate = () =>
      then(limiter!.chargeUnknownKey(client), (l) => {
        if (l && !l.allowed) throw new LookupRefused(l);
        charged = l !== null; // a limiter that failed open took no token, so none is given back
      });
    return keys.resolve(hash, gate).then((rec) => {
      if (rec && charged) limiter!.refundUnknownKey(client);
      return { rec };
    }, refused);
  }

  const refused = (err: unknown): KeyStepResult => {
    if (err instanceof LookupRefused) return { limited: err.answer as LimitResult };
    throw err;
  };

  function key(c: Ctx): KeyStepResult | Promise<KeyStepResult> {
    const header = c.req.headers.get('authorization');
    if (!header) return MISSING;
    const hash = hashOf(header);
    if (!hash) return INVALID;
    c.hash = hash;
    const known = keys.peek(hash);
    if (known) return { rec: known };
    if (!limiter) return known === null ? UNKNOWN : keys.resolve(hash).then((rec) => ({ rec }));
    const client = clientAddressOf(c, trusted);
    if (known === null) return then(limiter.chargeUnknownKey(client), (l) => refusedOr(l, UNKNOWN));
    // valid when last looked up: not one of the unknown keys the address is limited in (a NAT's flood of random keys
    // must not lock out its users' real keys once their records pass their minute)
    if (keys.seenValid(hash)) return keys.resolve(hash).then((rec) => ({ rec }));
    const denied = limiter.unknownKeyDenied(client);
    if (denied) return { limited: denied };
    return lookup(hash, client);
  }
  /** Headers memoised now (what the memo holds is bounded in count and in each header's length). */
  return Object.assign(key, { memoized: () => hashes.size });
}
