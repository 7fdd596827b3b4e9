/**
 * Activity rows in Postgres's binary COPY format: no text to escape on our side and
 * no timestamps or numbers to parse on the server's (about a third less work per row
 * for both than the text format).
 *
 * Rows go into a buffer as they are recorded, already framed as the COPY's CopyData messages of about 16 KB each;
 * each flush takes the messages since the last as a chunk, and the next rows follow in the same buffer, a new one made
 * only when it is full (a buffer per flush was most of what the activity log allocated: flushes come every 500 rows).
 * Free bytes around each chunk take the rest of the COPY's framing, so a chunk is sent where it lies, not copied
 * (`copyMessages`).
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

/**
 * Rows go to Postgres in CopyData messages of about this many bytes. Postgres reads each message whole into a buffer:
 * one message for a whole flush (85 KB) had it allocate and fault in fresh memory on every COPY, and messages of
 * 4-32 KB took 7-13 % less of its CPU an entry (docs/benchmarks.md).
 */
const MESSAGE_BYTES = 16 * 1024;
/** A CopyData message's type and length. */
const MESSAGE_HEAD = 5;
/** Free bytes before a chunk's first message: a CopyData message holding the binary format's header. */
const FRAME_BEFORE = MESSAGE_HEAD + COPY_HEADER.length;
/** Free bytes after its last: a CopyData message holding the format's trailer, then CopyDone. */
const FRAME_AFTER = MESSAGE_HEAD + COPY_TRAILER.length + 5;

export interface Chunk {
  /** CopyData messages holding the rows, in a buffer with FRAME_BEFORE free bytes before them and FRAME_AFTER after. */
  bytes: Buffer;
  rows: number;
}

/**
 * A COPY's messages, whole (https://www.postgresql.org/docs/current/protocol-message-formats.html): a CopyData
 * holding the binary format's header, those holding the rows, one holding its trailer, then CopyDone. postgres.js sends them in one write
 * when Postgres asks for the data (our patch, `copyIn`): a stream per COPY cost the gateway about twice the CPU a
 * statement (docs/benchmarks.md). A lone chunk (the usual flush) is framed in the free bytes around it and sent where
 * it lies; several (a backlog after an outage) are copied into one.
 */
export function copyMessages(batch: Chunk[]): Buffer {
  if (batch.length === 1) {
    const messages = batch[0]!.bytes;
    const length = messages.length;
    const out = Buffer.from(messages.buffer, messages.byteOffset - FRAME_BEFORE, FRAME_BEFORE + length + FRAME_AFTER);
    frame(out, length);
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

/** The framing around `length` bytes of the rows' messages that lie at FRAME_BEFORE in `out`. */
function frame(out: Buffer, length: number) {
  copyData(out, 0, COPY_HEADER.length);
  COPY_HEADER.copy(out, MESSAGE_HEAD);
  const p = FRAME_BEFORE + length;
  copyData(out, p, COPY_TRAILER.length);
  COPY_TRAILER.copy(out, p + MESSAGE_HEAD);
  const done = p + MESSAGE_HEAD + COPY_TRAILER.length;
  out[done] = 0x63; // 'c', CopyDone
  out.writeInt32BE(4, done + 1);
}

/** A CopyData message's head at `p`, for `length` bytes of data after it. */
function copyData(b: Buffer, p: number, length: number) {
  b[p] = 0x64; // 'd': its length counts itself and the data
  b.writeInt32BE(4 + length, p + 1);
}

export class BinaryRows {
  /** Full chunks, oldest first, then the one being filled. */
  readonly done: Chunk[] = [];
  private buf = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Where the messages not yet taken begin, where the open one's head lies, and where the next row goes. */
  private start = FRAME_BEFORE;
  private message = FRAME_BEFORE;
  private pos = FRAME_BEFORE + MESSAGE_HEAD;
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
    const need = MESSAGE_HEAD + 2 + FIELDS * 4 + 2 + 4 + 8 + 4 + texts * 3;
    if (this.pos + need + FRAME_AFTER > this.buf.length) this.seal(need);
    else if (this.pos - this.message >= MESSAGE_BYTES) this.nextMessage();
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

  /** The open message's head, for the rows written since it opened. */
  private closeMessage() {
    copyData(this.buf, this.message, this.pos - this.message - MESSAGE_HEAD);
  }

  /** Closes the open message and opens the next after it. */
  private nextMessage() {
    this.closeMessage();
    this.message = this.pos;
    this.pos += MESSAGE_HEAD;
  }

  /** Takes the messages since the last chunk as one; the next begin after its framing, in a new buffer if need be. */
  private seal(need: number) {
    if (this.rows) {
      this.closeMessage();
      this.done.push({ bytes: this.buf.subarray(this.start, this.pos), rows: this.rows });
      this.start = this.pos + FRAME_AFTER + FRAME_BEFORE;
    }
    if (this.start + need + FRAME_AFTER > this.buf.length) {
      this.buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, FRAME_BEFORE + need + FRAME_AFTER));
      this.start = FRAME_BEFORE;
    }
    this.message = this.start;
    this.pos = this.start + MESSAGE_HEAD;
    this.rows = 0;
  }
}
