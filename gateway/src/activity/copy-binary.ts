/**
 * The activity log's batches in Postgres's binary COPY format: no text to escape on our side and no timestamps or
 * numbers to parse on the server's (about a third less work than the text format).
 *
 * Entries wait as they were recorded until a flush. The flush groups them by studio, key and UTC minute and writes
 * each group as one row of `activity_batches`, its entries side by side in arrays (migration 00017): Postgres then
 * pays for a B-tree entry, a tuple and its slot once a batch instead of once a call. The rows are encoded into one
 * buffer kept from flush to flush (a buffer a flush was most of what the log allocated); free bytes around them take
 * the COPY's framing, so they are sent where they lie, not copied (`copyMessages`).
 * https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4
 * https://www.postgresql.org/docs/current/arrays.html (an array's binary form: `array_recv`)
 */
import type { ActivityEntry } from './entry';

/** `PGCOPY\n\377\r\n\0`, flags 0, no header extension. */
export const COPY_HEADER = Buffer.from([
  0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
]);
export const COPY_TRAILER = Buffer.from([0xff, 0xff]);

/** The column list these rows fill, in order. */
export const COPY_COLUMNS =
  'studio_id, key_id, first_at, last_at, at, operation_id, method, path, status, duration_ms, request_id, problem_code, trace_id, query, problem_detail, client_address, user_agent, refused_count';
const FIELDS = 18;
/** Entries a batch holds at most (the table's check; an entry's id in the `activity` view leaves room for 100,000). */
export const MAX_BATCH = 10_000;
/** Postgres timestamps count microseconds from 2000-01-01T00:00:00Z. */
const PG_EPOCH_MS = 946_684_800_000;
const MINUTE_MS = 60_000;
/** Element types' OIDs, which an array's binary form names (`pg_type`). */
const OID = { int2: 21, int4: 23, text: 25, float4: 700, timestamptz: 1184 } as const;
/** The text arrays before `status` and `duration_ms`, in COPY_COLUMNS's order. */
const LEADING_TEXT_COLUMNS = [
  (e: ActivityEntry) => e.operationId,
  (e: ActivityEntry) => e.method,
  (e: ActivityEntry) => e.path,
];
/** The text arrays, in COPY_COLUMNS's order after `duration_ms`'s. */
const TEXT_COLUMNS = [
  (e: ActivityEntry) => e.requestId,
  (e: ActivityEntry) => e.problemCode,
  (e: ActivityEntry) => e.traceId,
  (e: ActivityEntry) => e.query,
  (e: ActivityEntry) => e.problemDetail,
  (e: ActivityEntry) => e.clientAddress,
  (e: ActivityEntry) => e.userAgent,
];
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

/** The entries of one studio's key in one UTC minute (at most MAX_BATCH): one row of `activity_batches`. */
interface Group {
  studioId: string;
  keyId: string;
  minute: number;
  entries: ActivityEntry[];
  first: number;
  last: number;
}

/** Entries grouped by studio, key and minute, in the order each group first appears; entries in recorded order. */
function groupsOf(entries: ActivityEntry[]): Group[] {
  const out: Group[] = [];
  const open = new Map<string, Group>();
  let g: Group | undefined;
  for (const e of entries) {
    const minute = Math.floor(e.at / MINUTE_MS);
    // a run of one key's calls (the usual flush) finds its group without building and hashing its name
    if (
      !g ||
      g.keyId !== e.keyId ||
      g.studioId !== e.studioId ||
      g.minute !== minute ||
      g.entries.length >= MAX_BATCH
    ) {
      const id = `${e.studioId} ${e.keyId} ${minute}`;
      g = open.get(id);
      if (!g || g.entries.length >= MAX_BATCH) {
        g = { studioId: e.studioId, keyId: e.keyId, minute, entries: [], first: e.at, last: e.at };
        open.set(id, g);
        out.push(g);
      }
    }
    g.entries.push(e);
    if (e.at < g.first) g.first = e.at;
    if (e.at > g.last) g.last = e.at;
  }
  return out;
}

/** An upper bound on a group's row in bytes: every character three UTF-8 bytes. */
function sizeOf(g: Group): number {
  let texts = g.studioId.length + g.keyId.length;
  for (const e of g.entries) {
    for (const column of LEADING_TEXT_COLUMNS) texts += column(e)?.length ?? 0;
    for (const column of TEXT_COLUMNS) texts += column(e)?.length ?? 0;
  }
  // the row's field count and lengths, two timestamps, fourteen arrays' headers, then per entry its elements'
  // lengths (14) and fixed-size values (timestamp 8, status 2, duration 4, refused count 4)
  return 2 + FIELDS * 4 + 16 + 14 * 20 + g.entries.length * (14 * 4 + 18) + texts * 3;
}

/**
 * Entries as batch rows in one buffer. `take` encodes what waits into the buffer kept from the last flush, which is
 * free again once that flush is done; chunks a failed flush gives back (`restore`) keep theirs, and the next `take`
 * encodes into a new one.
 */
export class BatchRows {
  private pending: ActivityEntry[] = [];
  /** Chunks encoded and not yet written (given back by a failed flush), oldest first. */
  private held: Chunk[] = [];
  private buf: Buffer | null = null;
  private pos = 0;
  /** Entries held, encoded or not. */
  count = 0;

  add(e: ActivityEntry) {
    this.pending.push(e);
    this.count++;
  }

  /** Takes every entry recorded so far as chunks of batch rows, oldest first. */
  take(): Chunk[] {
    if (this.pending.length) this.held.push(this.encode(groupsOf(this.pending), this.pending.length));
    this.pending = [];
    const taken = this.held.splice(0);
    this.count = 0;
    return taken;
  }

  /** Puts chunks that could not be written back in front (a later flush retries them). */
  restore(chunks: Chunk[]) {
    this.held.unshift(...chunks);
    for (const c of chunks) this.count += c.rows;
    // a chunk given back may still lie in the buffer (and a cancelled COPY may still be sending it): the next gets a new one
    this.buf = null;
  }

  /** Drops the oldest entries: a held chunk, or else a tenth of those waiting (the buffer is bounded when Postgres is away). */
  dropOldest(): number {
    const chunk = this.held.shift();
    const dropped = chunk ? chunk.rows : this.pending.splice(0, Math.ceil(this.pending.length / 10)).length;
    this.count -= dropped;
    return dropped;
  }

  private encode(groups: Group[], entries: number): Chunk {
    let need = FRAME_BEFORE + FRAME_AFTER;
    for (const g of groups) need += sizeOf(g);
    if (!this.buf || this.buf.length < need) this.buf = Buffer.allocUnsafe(Math.max(need, 256 * 1024));
    this.pos = FRAME_BEFORE;
    for (const g of groups) this.row(g);
    return { bytes: this.buf.subarray(FRAME_BEFORE, this.pos), rows: entries };
  }

  /** One batch: its studio, key, first and last times, then an array a column. */
  private row(g: Group) {
    const b = this.buf!;
    const es = g.entries;
    this.pos = b.writeInt16BE(FIELDS, this.pos);
    this.text(g.studioId);
    this.text(g.keyId);
    this.timestamp(g.first);
    this.timestamp(g.last);
    this.array(OID.timestamptz, es, (e) => this.timestamp(e.at));
    for (const column of LEADING_TEXT_COLUMNS) this.textArray(es, column);
    this.array(OID.int2, es, (e) => {
      this.pos = b.writeInt32BE(2, this.pos);
      this.pos = b.writeInt16BE(e.status, this.pos);
      return false;
    });
    this.array(OID.float4, es, (e) => {
      this.pos = b.writeInt32BE(4, this.pos);
      this.pos = b.writeFloatBE(e.durationMs, this.pos);
      return false;
    });
    for (const column of TEXT_COLUMNS) this.textArray(es, column);
    this.array(OID.int4, es, (e) => {
      if (e.refusedCount == null) return this.nullElement();
      this.pos = b.writeInt32BE(4, this.pos);
      this.pos = b.writeInt32BE(e.refusedCount, this.pos);
      return false;
    });
  }

  private textArray(es: ActivityEntry[], get: (e: ActivityEntry) => string | null | undefined) {
    this.array(OID.text, es, (e) => {
      const s = get(e);
      return s == null ? this.nullElement() : this.text(s);
    });
  }

  /**
   * A one-dimensional array field: its length, then ndim 1, whether it has nulls, the element type, its size and
   * lower bound 1, then each element as `put` writes it (`put` returns true for a null).
   */
  private array(oid: number, es: ActivityEntry[], put: (e: ActivityEntry) => boolean) {
    const b = this.buf!;
    const at = this.pos;
    b.writeInt32BE(1, at + 4);
    b.writeInt32BE(oid, at + 12);
    b.writeInt32BE(es.length, at + 16);
    b.writeInt32BE(1, at + 20);
    this.pos = at + 24;
    let nulls = 0;
    for (const e of es) if (put(e)) nulls = 1;
    b.writeInt32BE(nulls, at + 8);
    b.writeInt32BE(this.pos - at - 4, at);
  }

  private nullElement(): true {
    this.pos = this.buf!.writeInt32BE(-1, this.pos);
    return true;
  }

  /** A timestamp field or element: its length, then microseconds since 2000 as an int64. */
  private timestamp(ms: number): false {
    const b = this.buf!;
    // an exact integer below 2^53: split by hand rather than allocate a BigInt
    const us = (ms - PG_EPOCH_MS) * 1000;
    const hi = Math.floor(us / 4294967296);
    b.writeInt32BE(8, this.pos);
    b.writeInt32BE(hi, this.pos + 4);
    this.pos = b.writeUInt32BE(us - hi * 4294967296, this.pos + 8);
    return false;
  }

  /** A text field or element: its length, then its UTF-8 bytes. */
  private text(s: string): false {
    const b = this.buf!;
    const p = this.pos;
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
        this.pos = p + 4 + n;
        return false;
      }
    }
    const bytes = b.write(s, p + 4);
    b.writeInt32BE(bytes, p);
    this.pos = p + 4 + bytes;
    return false;
  }
}
