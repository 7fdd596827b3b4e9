/**
 * Activity rows in Postgres's binary COPY format: no text to escape on our side and
 * no timestamps or numbers to parse on the server's (about a third less work per row
 * for both than the text format).
 *
 * Rows go into a buffer as they are recorded; each flush takes the rows since the last as a chunk, and the next rows
 * follow in the same buffer, a new one made only when it is full (a buffer per flush was most of what the activity
 * log allocated: flushes come every 500 rows). Free bytes around each chunk take the COPY's framing, so a chunk is
 * sent where it lies, not copied (`copyMessages`).
 * https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4
 */
import type { ActivityEntry } from './entry';

/** `PGCOPY\n\377\r\n\0`, flags 0, no header extension. */
export const COPY_HEADER = Buffer.from([
  0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
]);
export const COPY_TRAILER = Buffer.from([0xff, 0xff]);

/** The column list these rows fill, in order. */
export const COPY_COLUMNS =
  'studio_id, key_id, operation_id, method, path, status, outcome, duration_ms, request_id, at, problem_code, trace_id, query, problem_detail, client_address, user_agent, refused_count';
const FIELDS = 17;
/** Postgres timestamps count microseconds from 2000-01-01T00:00:00Z. */
const PG_EPOCH_MS = 946_684_800_000;
const CHUNK_BYTES = 256 * 1024;
/** Texts up to this length are tried as ASCII in JavaScript before `Buffer.write`. */
const ASCII_BY_HAND = 64;

/** Free bytes before a chunk's first row: CopyData's type and length, then the binary format's header. */
const FRAME_BEFORE = 5 + COPY_HEADER.length;
/** Free bytes after its last row: the format's trailer, then CopyDone. */
const FRAME_AFTER = COPY_TRAILER.length + 5;

export interface Chunk {
  /** The rows, in a buffer with FRAME_BEFORE free bytes before them and FRAME_AFTER after. */
  bytes: Buffer;
  rows: number;
}

/**
 * A COPY's messages, whole (https://www.postgresql.org/docs/current/protocol-message-formats.html): one CopyData
 * holding the binary format's header, the rows and its trailer, then CopyDone. postgres.js sends them in one write
 * when Postgres asks for the data (our patch, `copyIn`): a stream per COPY cost the gateway about twice the CPU a
 * statement (docs/benchmarks.md). A lone chunk (the usual flush) is framed in the free bytes around it and sent where
 * it lies; several (a backlog after an outage) are copied into one.
 */
export function copyMessages(batch: Chunk[]): Buffer {
  if (batch.length === 1) {
    const rows = batch[0]!.bytes;
    const out = Buffer.from(rows.buffer, rows.byteOffset - FRAME_BEFORE, FRAME_BEFORE + rows.length + FRAME_AFTER);
    frame(out, rows.length);
    return out;
  }
  let data = 0;
  for (const c of batch) data += c.bytes.length;
  const out = Buffer.allocUnsafe(FRAME_BEFORE + data + FRAME_AFTER);
  let p = FRAME_BEFORE;
  for (const c of batch) p += c.bytes.copy(out, p);
  frame(out, data);
  return out;
}

/** The framing around `rows` bytes of rows that lie at FRAME_BEFORE in `out`. */
function frame(out: Buffer, rows: number) {
  out[0] = 0x64; // 'd', CopyData: its length counts itself and the data
  out.writeInt32BE(4 + COPY_HEADER.length + rows + COPY_TRAILER.length, 1);
  COPY_HEADER.copy(out, 5);
  let p = FRAME_BEFORE + rows;
  p += COPY_TRAILER.copy(out, p);
  out[p] = 0x63; // 'c', CopyDone
  out.writeInt32BE(4, p + 1);
}

export class BinaryRows {
  /** Full chunks, oldest first, then the one being filled. */
  readonly done: Chunk[] = [];
  private buf = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Where the rows not yet taken begin, and where the next one goes. */
  private start = FRAME_BEFORE;
  private pos = FRAME_BEFORE;
  private rows = 0;
  /** Rows held, sent or not yet. */
  count = 0;

  add(e: ActivityEntry) {
    // worst case: every character three UTF-8 bytes
    const texts =
      e.studioId.length +
      e.keyId.length +
      (e.operationId?.length ?? 0) +
      e.method.length +
      e.path.length +
      e.outcome.length +
      e.requestId.length +
      (e.problemCode?.length ?? 0) +
      (e.traceId?.length ?? 0) +
      (e.query?.length ?? 0) +
      (e.problemDetail?.length ?? 0) +
      (e.clientAddress?.length ?? 0) +
      (e.userAgent?.length ?? 0);
    const need = 2 + FIELDS * 4 + 2 + 4 + 8 + 4 + texts * 3;
    if (this.pos + need + FRAME_AFTER > this.buf.length) this.seal(need);
    const b = this.buf;
    let p = this.pos;
    b.writeInt16BE(FIELDS, p);
    p = this.text(e.studioId, p + 2);
    p = this.text(e.keyId, p);
    p = e.operationId === null ? b.writeInt32BE(-1, p) : this.text(e.operationId, p);
    p = this.text(e.method, p);
    p = this.text(e.path, p);
    p = b.writeInt32BE(2, p);
    p = b.writeInt16BE(e.status, p);
    p = this.text(e.outcome, p);
    p = b.writeInt32BE(4, p);
    p = b.writeFloatBE(e.durationMs, p);
    p = this.text(e.requestId, p);
    p = b.writeInt32BE(8, p);
    // an exact integer below 2^53: split by hand rather than allocate a BigInt per row
    const us = (e.at - PG_EPOCH_MS) * 1000;
    const hi = Math.floor(us / 4294967296);
    p = b.writeInt32BE(hi, p);
    p = b.writeUInt32BE(us - hi * 4294967296, p);
    p = this.nullableText(e.problemCode ?? null, p);
    p = this.nullableText(e.traceId ?? null, p);
    p = this.nullableText(e.query ?? null, p);
    p = this.nullableText(e.problemDetail ?? null, p);
    p = this.nullableText(e.clientAddress ?? null, p);
    p = this.nullableText(e.userAgent ?? null, p);
    if (e.refusedCount == null) p = b.writeInt32BE(-1, p);
    else {
      p = b.writeInt32BE(4, p);
      p = b.writeInt32BE(e.refusedCount, p);
    }
    this.pos = p;
    this.rows++;
    this.count++;
  }

  /** Takes every chunk recorded so far, oldest first. */
  take(): Chunk[] {
    if (this.rows) this.seal(0);
    const taken = this.done.splice(0);
    this.count = 0;
    return taken;
  }

  /** Puts chunks that could not be written back in front (a later flush retries them). */
  restore(chunks: Chunk[]) {
    this.done.unshift(...chunks);
    for (const c of chunks) this.count += c.rows;
  }

  /** Drops the oldest chunk (the buffer is bounded when Postgres is away). */
  dropOldest(): number {
    const dropped = this.done.shift();
    if (dropped) this.count -= dropped.rows;
    return dropped?.rows ?? 0;
  }

  private nullableText(s: string | null, p: number): number {
    return s === null ? this.buf.writeInt32BE(-1, p) : this.text(s, p);
  }

  /** A text field: its length, then its UTF-8 bytes. */
  private text(s: string, p: number): number {
    const b = this.buf;
    const n = s.length;
    // short ASCII (ids, methods, codes, most paths): byte by byte here, cheaper than a call into the runtime
    if (n <= ASCII_BY_HAND) {
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        b[p + 4 + i] = c;
      }
      if (i === n) {
        b.writeInt32BE(n, p);
        return p + 4 + n;
      }
    }
    const bytes = b.write(s, p + 4);
    b.writeInt32BE(bytes, p);
    return p + 4 + bytes;
  }

  /** Takes the rows since the last chunk as one; the next begin after its framing, in a new buffer if need be. */
  private seal(need: number) {
    if (this.rows) {
      this.done.push({ bytes: this.buf.subarray(this.start, this.pos), rows: this.rows });
      this.start = this.pos + FRAME_AFTER + FRAME_BEFORE;
    }
    if (this.start + need + FRAME_AFTER > this.buf.length) {
      this.buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, FRAME_BEFORE + need + FRAME_AFTER));
      this.start = FRAME_BEFORE;
    }
    this.pos = this.start;
    this.rows = 0;
  }
}
