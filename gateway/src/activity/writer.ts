import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { log } from '@studio/shared';
import type { Sql } from '@studio/shared/io/db';
import { clientBlock } from '../limits/rate-limiter';
import { BinaryRows, type Chunk, COPY_COLUMNS, COPY_HEADER, COPY_TRAILER } from './copy-binary';
import type { ActivityEntry } from './entry';

interface Hourly {
  studioId: string;
  /** Start of the hour, ms since the epoch. */
  hour: number;
  calls: number;
  errors: number;
}

/**
 * The keys' newest use and a flush's counts added to `activity_hourly` (one row per studio and
 * hour), in one statement: both or neither.
 */
async function writeStamps(sql: Sql, used: Map<string, number>, hourly: Hourly[]) {
  const iso = (ms: number) => new Date(ms).toISOString();
  await sql`
    with used as (
      update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
      from unnest(${[...used.keys()]}::text[], ${[...used.values()].map(iso)}::timestamptz[]) as u(id, at)
      where k.id = u.id)
    insert into activity_hourly (studio_id, hour, calls, errors)
    select * from unnest(${hourly.map((r) => r.studioId)}::text[], ${hourly.map((r) => iso(r.hour))}::timestamptz[],
                         ${hourly.map((r) => r.calls)}::int[], ${hourly.map((r) => r.errors)}::int[])
    on conflict (studio_id, hour) do update
      set calls = activity_hourly.calls + excluded.calls, errors = activity_hourly.errors + excluded.errors`;
}

/** `work`, or a failure once `ms` have passed without it. */
async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export const outcomeOf = (status: number): ActivityEntry['outcome'] =>
  status >= 500 ? 'server_error' : status >= 400 ? 'client_error' : 'success';

/** Rows held while Postgres is away (about 170 bytes each: 34 MB, a few seconds at full load), then the oldest go. */
const MAX_BUFFER = 200_000;
/**
 * A COPY commits once it holds this many rows, as well as on the interval: what a failure sends again, and what
 * Postgres holds uncommitted, stay bounded.
 */
export const COPY_ROWS_MAX = 8_000;
/**
 * Entries are sent as soon as this many wait, not only on the interval: under load that is every 10-20 ms, so
 * Postgres takes the log in slices of 2-3 ms of its CPU. One flush of half a second's entries (20,000 at full load)
 * kept Postgres busy for 100 ms and more at a stretch, on the cores the gateway serves from, and put the cached
 * read's p99 at 7-9 ms; 2,000-entry batches still gave 5-6 ms (docs/benchmarks.md). The slices go into one COPY
 * left open between them (`send`), which commits on the interval or at COPY_ROWS_MAX: a COPY statement per slice
 * cost the gateway about 3 % of a cached read's CPU (`bench:pair --cached`). The keys' "last used" and the hourly
 * counts wait for the interval's flush (each is a statement per flush).
 */
export const FLUSH_ROWS = 500;
const RETENTION_DAYS = 90;
/**
 * 429s waiting for their second to end (one per key, address and second). Past this, they are
 * written at once: a second may then get two entries, but memory stays bounded under a flood
 * from many addresses.
 */
const MAX_FOLDS = 10_000;
/** A second's folds wait this long past its end, for 429s that arrived in it and are answered a little later. */
const FOLD_GRACE_MS = 250;
const PRUNE_EVERY_MS = 3_600_000;
/**
 * How long the open COPY may take to accept a chunk, or to confirm its end, before the flush counts as failed (its
 * rows kept for the next). Without it, a session cut after the COPY's last byte went out (Postgres restarted, a
 * pooler or an administrator ended it) held the flush forever: postgres.js's stream then waits for a confirmation
 * that never comes, and no later flush runs. A COPY confirmed after this (a Postgres stalled that long) may be
 * written twice.
 */
const COPY_DEADLINE_MS = 30_000;

/** The COPY rows stream into between two commits (`ActivityWriter.send`). */
interface OpenCopy {
  stream: Writable;
  /** Chunks sent into it, held until it commits: a failure puts them back, in order. */
  sent: Chunk[];
  rows: number;
  /** The stream's failure, when it came while nothing waited on it (Postgres went away between two slices). */
  error: unknown;
}

/**
 * Activity rows and last-used stamps, written in batches off the request path.
 * Each entry is encoded at once into binary COPY chunks, so the buffer holds a few
 * byte arrays rather than thousands of live objects or strings. A failed flush keeps
 * the rows for the next one (bounded: the oldest go first); `close` flushes all.
 */
export class ActivityWriter {
  private rows = new BinaryRows();
  /** Newest use per key since the last flush, in ms. */
  private lastUsed = new Map<string, number>();
  /** Calls and errors per studio and hour since the last flush (the dashboard's chart). */
  private hourly = new Map<string, Hourly>();
  /** 429s folded per key, client address and second, written once their second is over. */
  private folds = new Map<string, ActivityEntry>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private queuedStamps = false;
  private pruner: ReturnType<typeof setInterval> | null = null;
  private open: OpenCopy | null = null;
  /** Retention runs in the next interval's flush, on the writer's connection, when no COPY holds it. */
  private pruneDue = false;
  private pruned = 0;
  /** Running totals, for `studio_activity_written_total` and `studio_activity_dropped_total`. */
  written = 0;
  dropped = 0;
  /** Flushes that failed (Postgres away); while the last one did, only the interval retries. */
  failedFlushes = 0;
  private failing = false;
  /** Set by `close`: the last flush writes the folds of the second still running too. */
  private closing = false;

  constructor(
    private sql: Sql,
    private intervalMs = 500,
    private copyDeadlineMs = COPY_DEADLINE_MS,
  ) {}

  start() {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.pruner ??= setInterval(() => void this.prune(), PRUNE_EVERY_MS);
  }

  /**
   * Retention: entries older than 90 days go, a bounded batch at a time. It runs in a flush, after its COPY
   * commits: postgres.js refuses any other statement on a connection while a COPY is open on it.
   */
  async prune(): Promise<number> {
    this.pruned = 0;
    this.pruneDue = true;
    await this.flush();
    return this.pruned;
  }

  private async deleteOld(): Promise<number> {
    try {
      const rows = await this.sql`
        delete from activity where ctid = any(array(
          select ctid from activity where at < now() - make_interval(days => ${RETENTION_DAYS}) limit 10000))`;
      await this.sql`delete from activity_hourly where hour < now() - make_interval(days => ${RETENTION_DAYS})`;
      return rows.count;
    } catch (err) {
      log('warn', 'activity prune failed', { error: String(err) });
      return 0;
    }
  }

  /** Rows waiting to be written (folded 429s included, and those sent into a COPY that has not committed yet). */
  get buffered(): number {
    return this.rows.count + this.folds.size + (this.open?.rows ?? 0);
  }

  record(e: ActivityEntry) {
    if (e.status === 429) this.fold(e);
    else this.add(e);
    // "last used" counts only calls the key was allowed to make: a refusal (revoked, wrong kind, scope, rate) is not a use
    if (e.status !== 401 && e.status !== 403 && e.status !== 429) this.lastUsed.set(e.keyId, e.at);
    const hour = e.at - (e.at % 3_600_000);
    const id = `${e.studioId} ${hour}`;
    let h = this.hourly.get(id);
    if (!h) this.hourly.set(id, (h = { studioId: e.studioId, hour, calls: 0, errors: 0 }));
    h.calls++;
    if (e.outcome !== 'success') h.errors++;
    if (this.rows.count >= FLUSH_ROWS && !this.flushing && !this.failing) void this.flush(false);
  }

  private add(e: ActivityEntry) {
    if (this.rows.count >= MAX_BUFFER) this.dropped += this.rows.dropOldest();
    this.rows.add(e);
  }

  /**
   * A 429 joins the entry of its key, client address and second (docs/design/hostile-callers.md): a flood adds
   * about one row a second, which says how many were refused. The first call's entry stands
   * for them all; it is written once its second is over (`release`), so no second gets two.
   */
  private fold(e: ActivityEntry) {
    // by the address's block, as the limit counts it: an IPv6 flood from one /64 is one entry a second too
    const id = `${e.keyId} ${Math.floor(e.at / 1000)} ${clientBlock(e.clientAddress ?? '')}`;
    const folded = this.folds.get(id);
    if (folded) {
      folded.refusedCount = (folded.refusedCount ?? 1) + 1;
      return;
    }
    if (this.folds.size >= MAX_FOLDS) this.release(Infinity);
    e.refusedCount = 1;
    this.folds.set(id, e);
  }

  /** Moves the folded 429s of seconds before `second` to the rows to write. */
  private release(second: number) {
    for (const [id, e] of this.folds) {
      if (Math.floor(e.at / 1000) >= second) continue;
      this.folds.delete(id);
      this.add(e);
    }
  }

  /**
   * Writes every entry recorded before the call (after the flush already running, if one is),
   * and the keys' "last used" and the hourly counts (`drain`). Without `stamps` (a slice of
   * FLUSH_ROWS entries, from `record`), the entries are sent into the open COPY, not committed.
   */
  flush(stamps = true): Promise<void> {
    if (!this.flushing) return (this.flushing = this.drain(stamps).finally(() => (this.flushing = null)));
    // one flush waits for the running one, for every caller: it commits if any of them asked it to
    this.queuedStamps ||= stamps;
    return (this.queued ??= this.flushing.then(() => {
      const commit = this.queuedStamps;
      this.queued = null;
      this.queuedStamps = false;
      return this.flush(commit);
    }));
  }

  /**
   * Sends what was recorded up to now into the open COPY (a statement of its own, atomic
   * without a transaction), then, with `stamps`, commits it and writes the keys' "last used"
   * and the hourly counts in one more statement. The connection commits asynchronously
   * (`createSql`'s `asyncCommit`): a crash may lose the last moment of the log, as the
   * in-memory buffer already can. Rows recorded while it runs wait for the next flush.
   */
  private async drain(stamps: boolean) {
    this.release(this.closing ? Infinity : Math.floor((Date.now() - FOLD_GRACE_MS) / 1000));
    const chunks = this.rows.take();
    /** The first chunk not yet in any COPY. */
    let next = 0;
    try {
      for (; next < chunks.length; next++) {
        await this.send(chunks[next]!);
        if (this.open!.rows >= COPY_ROWS_MAX) await this.commit();
      }
      if (stamps) await this.commit();
    } catch (err) {
      // what no COPY committed goes back for the next flush, oldest first (the stamps wait with it)
      this.rows.restore([...(this.open?.sent ?? []), ...chunks.slice(next)]);
      this.open?.stream.destroy();
      this.open = null;
      return this.failed(err);
    }
    if (stamps && (this.lastUsed.size || this.hourly.size)) {
      const [used, hourly] = [this.lastUsed, this.hourly];
      this.lastUsed = new Map();
      this.hourly = new Map();
      try {
        await writeStamps(this.sql, used, [...hourly.values()]);
      } catch (err) {
        this.restoreStamps(used, hourly);
        return this.failed(err);
      }
    }
    this.failing = false;
    if (stamps && this.pruneDue) {
      this.pruneDue = false;
      this.pruned = await this.deleteOld();
    }
  }

  /**
   * One chunk into the open COPY, opening one (Postgres's cheapest way in; its binary form needs
   * no parsing) if none is. The chunk is held until the COPY commits.
   */
  private async send(chunk: Chunk) {
    let open = this.open;
    if (!open) {
      const stream = await this.sql
        .unsafe(`copy activity (${COPY_COLUMNS}) from stdin with (format binary)`)
        .writable();
      const opened: OpenCopy = { stream, sent: [], rows: 0, error: null };
      // a failure while no flush waits on the stream is kept for the next one (unheard, it would end the process)
      stream.on('error', (err) => {
        opened.error ??= err;
      });
      stream.write(COPY_HEADER);
      open = this.open = opened;
    }
    const written = !open.error && !open.stream.destroyed && open.stream.write(chunk.bytes);
    if (!written) {
      if (open.error || open.stream.destroyed) throw open.error ?? new Error('the activity COPY was closed');
      await within(once(open.stream, 'drain'), this.copyDeadlineMs, 'the activity COPY took no more rows');
    }
    open.sent.push(chunk);
    open.rows += chunk.rows;
  }

  /** Ends the open COPY, if any: its rows are written. */
  private async commit() {
    const open = this.open;
    if (!open) return;
    if (open.error) throw open.error;
    open.stream.end(COPY_TRAILER);
    await within(finished(open.stream), this.copyDeadlineMs, 'the activity COPY was not confirmed');
    this.open = null;
    this.written += open.rows;
  }

  /** Stamps that could not be written go back for the next flush; a newer use recorded meanwhile wins. */
  private restoreStamps(used: Map<string, number>, hourly: Map<string, Hourly>) {
    for (const [id, ms] of used) if ((this.lastUsed.get(id) ?? 0) < ms) this.lastUsed.set(id, ms);
    for (const [id, h] of hourly) {
      const now = this.hourly.get(id);
      if (now) {
        now.calls += h.calls;
        now.errors += h.errors;
      } else this.hourly.set(id, h);
    }
  }

  private failed(err: unknown) {
    this.failing = true;
    this.failedFlushes++;
    log('warn', 'activity flush failed; will retry', { error: String(err), pending: this.rows.count });
  }

  async close() {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    if (this.pruner) clearInterval(this.pruner);
    this.timer = this.pruner = null;
    await this.flush();
  }
}
