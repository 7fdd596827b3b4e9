/**
 * A Buffer as Node and Bun make it: `latin1Write` and `utf8Write` are what `write(s, offset, encoding)` calls, without
 * its arguments read (it costs 30 ns a call more, a lot where a head or an access line is written a value at a time).
 * Undocumented, so the edge's first test and the access lines' tests hold them to what they do.
 */
export interface TextBuffer extends Buffer {
  /** `s` a byte a character (a character above 0xff as its low byte); returns the bytes written. */
  latin1Write(s: string, offset: number): number;
  /** `s` as UTF-8; returns the bytes written. */
  utf8Write(s: string, offset: number): number;
}
