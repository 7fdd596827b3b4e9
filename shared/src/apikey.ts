import { BASE62_RE, decodeBase62Small, encodeBase62, randomBase62 } from './base62';

/**
 * Key text: `svc_pk_`/`svc_sk_`, then `test_` for a sandbox's key (test mode, docs/design/test-mode.md), then 26
 * random base62 (≈154 bits) and a 6-char base62 CRC32 checksum of them. A live key has no mode word: its form is the
 * one the specification fixes.
 */
export type KeyKind = 'publishable' | 'secret';
/** Live keys reach a studio's real data; test keys one of its sandboxes. */
export type KeyMode = 'live' | 'test';
export const KEY_MODES: readonly KeyMode[] = ['live', 'test'];
export const KEY_PREFIX: Record<KeyKind, string> = { publishable: 'svc_pk_', secret: 'svc_sk_' };
const TEST_WORD = 'test_';
const RANDOM_LEN = 26;
const CHECK_LEN = 6;
const LIVE_LEN = 7 + RANDOM_LEN + CHECK_LEN;
const TEST_LEN = LIVE_LEN + TEST_WORD.length;

const checksum = (body: string) => encodeBase62(BigInt(Bun.hash.crc32(body)), CHECK_LEN);

export function generateKey(kind: KeyKind, mode: KeyMode = 'live'): string {
  const body = randomBase62(RANDOM_LEN);
  return KEY_PREFIX[kind] + (mode === 'test' ? TEST_WORD : '') + body + checksum(body);
}

export interface ParsedKey {
  kind: KeyKind;
  mode: KeyMode;
}
const PARSED: Record<KeyKind, Record<KeyMode, ParsedKey>> = {
  publishable: { live: { kind: 'publishable', mode: 'live' }, test: { kind: 'publishable', mode: 'test' } },
  secret: { live: { kind: 'secret', mode: 'live' }, test: { kind: 'secret', mode: 'test' } },
};

/** The kind and mode of a well-formed key with a valid checksum, or null (checked without any lookup). */
export function parseKey(text: string): ParsedKey | null {
  const mode: KeyMode | null = text.length === LIVE_LEN ? 'live' : text.length === TEST_LEN ? 'test' : null;
  if (!mode) return null;
  const kind = text.startsWith('svc_pk_') ? 'publishable' : text.startsWith('svc_sk_') ? 'secret' : null;
  if (!kind) return null;
  if (mode === 'test' && !text.startsWith(TEST_WORD, 7)) return null;
  const rest = text.slice(mode === 'test' ? 7 + TEST_WORD.length : 7);
  if (!BASE62_RE.test(rest)) return null;
  return Bun.hash.crc32(rest.slice(0, RANDOM_LEN)) === decodeBase62Small(rest.slice(RANDOM_LEN))
    ? PARSED[kind][mode]
    : null;
}

/** The mode a key's text names, without checking it (a key already parsed, or a hint): `test` after the prefix. */
export const keyModeOf = (text: string): KeyMode => (text.startsWith(TEST_WORD, 7) ? 'test' : 'live');

export const hashKey = (text: string): string => new Bun.CryptoHasher('sha256').update(text).digest('hex');
/** What the dashboard and the activity log show of a key: its prefix and mode, and its last 4 characters. */
export const keyHint = (text: string): string =>
  `${text.slice(0, keyModeOf(text) === 'test' ? 7 + TEST_WORD.length : 7)}…${text.slice(-4)}`;

/** Key text anywhere in a string: a key pasted into a URL's path or query by mistake. */
const KEY_IN_TEXT = /svc_(pk|sk)_(test_)?[0-9A-Za-z]{32}/g;
/**
 * `text` with every key in it replaced by `svc_pk_[redacted]` / `svc_sk_test_[redacted]`: what a log line, a span or
 * an activity entry keeps of a path, a query or a problem detail (no log ever holds a key, docs/design/keys.md).
 */
export const redactKeys = (text: string): string =>
  text.includes('svc_') ? text.replace(KEY_IN_TEXT, 'svc_$1_$2[redacted]') : text;
