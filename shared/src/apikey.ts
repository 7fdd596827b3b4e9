import { BASE62_RE, decodeBase62Small, encodeBase62, randomBase62 } from './base62';

/** Key text: `svc_pk_`/`svc_sk_` + 26 random base62 (≈154 bits) + 6-char base62 CRC32 checksum. */
export type KeyKind = 'publishable' | 'secret';
export const KEY_PREFIX: Record<KeyKind, string> = { publishable: 'svc_pk_', secret: 'svc_sk_' };
const RANDOM_LEN = 26;
const CHECK_LEN = 6;

const checksum = (body: string) => encodeBase62(BigInt(Bun.hash.crc32(body)), CHECK_LEN);

export function generateKey(kind: KeyKind): string {
  const body = randomBase62(RANDOM_LEN);
  return KEY_PREFIX[kind] + body + checksum(body);
}

/** The kind of a well-formed key with a valid checksum, or null (checked without any lookup). */
export function parseKey(text: string): KeyKind | null {
  if (text.length !== 7 + RANDOM_LEN + CHECK_LEN) return null;
  const kind = text.startsWith('svc_pk_') ? 'publishable' : text.startsWith('svc_sk_') ? 'secret' : null;
  if (!kind) return null;
  const rest = text.slice(7);
  if (!BASE62_RE.test(rest)) return null;
  return Bun.hash.crc32(rest.slice(0, RANDOM_LEN)) === decodeBase62Small(rest.slice(RANDOM_LEN)) ? kind : null;
}

export const hashKey = (text: string): string => new Bun.CryptoHasher('sha256').update(text).digest('hex');
export const keyHint = (text: string): string => `${text.slice(0, 7)}…${text.slice(-4)}`;

/** Key text anywhere in a string: a key pasted into a URL's path or query by mistake. */
const KEY_IN_TEXT = /svc_(pk|sk)_[0-9A-Za-z]{32}/g;
/**
 * `text` with every key in it replaced by `svc_pk_[redacted]` / `svc_sk_[redacted]`: what a log line, a span or an
 * activity entry keeps of a path, a query or a problem detail (no log ever holds a key, docs/design/keys.md).
 */
export const redactKeys = (text: string): string =>
  text.includes('svc_') ? text.replace(KEY_IN_TEXT, 'svc_$1_[redacted]') : text;
