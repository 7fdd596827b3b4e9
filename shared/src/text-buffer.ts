/** Up to this many characters a loop copies them faster than a call into Buffer's `write` costs (about 90 ns). */
const LOOP_MAX = 32;

/**
 * `s` into `b` at `p`, a byte a character (`latin1`: a character above 0xff as its low byte); returns where it ended,
 * also past the end of `b`, where nothing is written (a caller that sized `b` first never gets there; one that did
 * not learns the length it needs). A short value (an id, a method, a field's name) is copied by a loop at about
 * 1 ns a character; a longer one by Buffer's documented `write`, one native copy.
 */
export function putLatin1(b: Buffer, p: number, s: string): number {
  const n = s.length;
  if (p + n > b.length) return p + n;
  if (n <= LOOP_MAX) for (let i = 0; i < n; i++) b[p + i] = s.charCodeAt(i);
  else b.write(s, p, 'latin1');
  return p + n;
}
