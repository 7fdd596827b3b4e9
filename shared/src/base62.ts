const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const BASE62_RE = /^[0-9A-Za-z]+$/;

/** Uniform random base62 string (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  const buf = new Uint8Array(length * 2);
  while (out.length < length) {
    crypto.getRandomValues(buf);
    for (const b of buf) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/** Fixed-width base62 of a non-negative integer; ASCII order equals numeric order. */
export function encodeBase62(n: bigint, width: number): string {
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(width, '0');
}

/** Inverse of encodeBase62 (any width); null when `s` is not base62. */
export function decodeBase62(s: string): bigint | null {
  if (!BASE62_RE.test(s)) return null;
  let n = 0n;
  for (let i = 0; i < s.length; i++) n = n * 62n + BigInt(ALPHABET.indexOf(s[i]!));
  return n;
}

/** Inverse of encodeBase62 for widths up to 8 (62^8 < 2^53, so plain arithmetic is exact and fast). */
export function decodeBase62Small(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) n = n * 62 + ALPHABET.indexOf(s[i]!);
  return n;
}
