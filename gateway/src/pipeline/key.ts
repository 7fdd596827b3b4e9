import { hashKey, parseKey } from '@studio/shared';
import type { KeyRecord, KeyResolver } from '../keys/resolver';
import type { Ctx } from './context';

/** What the Authorization header led to: a record (null: no such key), or why it could not be looked up. */
export type KeyLookup = { rec: KeyRecord | null } | { problem: 'api_key_missing' | 'api_key_invalid' };

const MISSING: KeyLookup = { problem: 'api_key_missing' };
const INVALID: KeyLookup = { problem: 'api_key_invalid' };
const HEADERS_MAX = 10_000;
const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Step 3: the key behind the Authorization header. Format and checksum are checked
 * before any lookup; the record comes from the resolver's memory when it can be
 * trusted (synchronously), else from Redis or Postgres. A lookup that fails (the
 * database is down) rejects: the pipeline answers 503.
 */
export function keyStep(keys: KeyResolver) {
  /** Header -> key hash: a site's visitors all send the same header, so it is parsed and hashed once. */
  const hashes = new Map<string, string>();

  function hashOf(header: string): string | null {
    const known = hashes.get(header);
    if (known) return known;
    const m = BEARER.exec(header);
    if (!m || !parseKey(m[1]!)) return null;
    const hash = hashKey(m[1]!);
    if (hashes.size >= HEADERS_MAX) hashes.clear();
    hashes.set(header, hash);
    return hash;
  }

  return function key(c: Ctx): KeyLookup | Promise<KeyLookup> {
    const header = c.req.headers.get('authorization');
    if (!header) return MISSING;
    const hash = hashOf(header);
    if (!hash) return INVALID;
    c.hash = hash;
    const known = keys.peek(hash);
    if (known !== undefined) return { rec: known };
    return keys.resolve(hash).then((rec) => ({ rec }));
  };
}
