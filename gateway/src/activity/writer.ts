import { iso, log, withDeadline } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import { clientBlock } from '../limits/rate-limiter';
import { BatchRows, type Chunk, COPY_COLUMNS, copyMessages } from './copy-binary';
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

export const outcomeOf = (status: number): ActivityEntry['outcome'] =>
  status >= 500 ? 'server_error' : status >= 400 ? 'client_error' : 'success';

/** Entries held while Postgres is away (a few seconds at full load), then the oldest go: as objects until a flush takes them, then encoded (about 180 bytes each). */
const MAX_BUFFER = 200_000;
/** Chunks per COPY (a chunk: the batches of one flush). */
const BATCH_CHUNKS = 8;
/**
 * A flush starts as soon as this many entries wait, not only on the interval: under load
 * that is every 10-20 ms, so Postgres takes the log in slices of 2-3 ms of its CPU. One
 * flush of half a second's entries (20,000 at full load) kept Postgres busy for 100 ms
 * and more at a stretch, on the cores the gateway serves from, and put the cached read's
 * p99 at 7-9 ms; 2,000-entry batches still gave 5-6 ms (docs/benchmarks.md). Such a
 * flush writes the entries only: the keys' "last used" and the hourly counts wait for the
 * interval's flush (each is a statement per flush, about 1 µs an entry of the gateway's
 * CPU and 1 of Postgres's when written every 500 entries).
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
 * How long one COPY may take, sent and confirmed, before its flush counts as failed (its rows kept for the next) and
 * the statement is cancelled. Without it, a Postgres that stops answering with its connection up would hold the flush
 * forever, and no later flush would run. A COPY confirmed after this (a Postgres stalled that long) may be written
 * twice.
 */
const COPY_DEADLINE_MS = 30_000;

/**
 * Activity entries and last-used stamps, written in batches off the request path. A flush writes the entries
 * recorded since the last as one row of `activity_batches` per studio, key and minute (`BatchRows`), encoded in
 * binary, so what a failed flush keeps for the next is a few byte arrays rather than thousands of live objects
 * (bounded: the oldest go first); `close` flushes all.
 */
export class ActivityWriter {
  private rows = new BatchRows();
  /** Newest use per key since the last flush, in ms. */
  private lastUsed = new Map<string, number>();
  /** Calls and errors per studio and hour since the last flush (the dashboard's chart). */
  private hourly = new Map<string, Hourly>();
  /** The count `record` added to last, and the map it is in (a flush replaces the map). */
  private recent: Hourly | null = null;
  private recentIn: Map<string, Hourly> | null = null;
  /** 429s folded per key, client address and second, written once their second is over. */
  private folds = new Map<string, ActivityEntry>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private pruner: ReturnType<typeof setInterval> | null = null;
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

  /** Retention: batches whose newest entry is older than 90 days go, a bounded number at a time (the count returned). */
  async prune(): Promise<number> {
    try {
      const rows = await this.sql`
        delete from activity_batches where ctid = any(array(
          select ctid from activity_batches where last_at < now() - make_interval(days => ${RETENTION_DAYS}) limit 1000))`;
      await this.sql`delete from activity_hourly where hour < now() - make_interval(days => ${RETENTION_DAYS})`;
      return rows.count;
    } catch (err) {
      log('warn', 'activity prune failed', { error: String(err) });
      return 0;
    }
  }

  /** Rows waiting to be written (folded 429s included). */
  get buffered(): number {
    return this.rows.count + this.folds.size;
  }

  record(e: ActivityEntry) {
    if (e.status === 429) this.fold(e);
    else this.add(e);
    // "last used" counts only calls the key was allowed to make: a refusal (revoked, wrong kind, scope, rate) is not a use
    if (e.status !== 401 && e.status !== 403 && e.status !== 429) this.lastUsed.set(e.keyId, e.at);
    const hour = e.at - (e.at % 3_600_000);
    // a run of calls of one studio in one hour finds its count without building and hashing its name
    let h = this.recent;
    if (!h || this.recentIn !== this.hourly || h.studioId !== e.studioId || h.hour !== hour) {
      const id = `${e.studioId} ${hour}`;
      const known = this.hourly.get(id);
      h = known ?? { studioId: e.studioId, hour, calls: 0, errors: 0 };
      if (!known) this.hourly.set(id, h);
      this.recent = h;
      this.recentIn = this.hourly;
    }
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
   * and with `stamps` the keys' "last used" and the hourly counts (`drain`).
   */
  flush(stamps = true): Promise<void> {
    if (!this.flushing) return (this.flushing = this.drain(stamps).finally(() => (this.flushing = null)));
    return (this.queued ??= this.flushing.then(() => {
      this.queued = null;
      return this.flush();
    }));
  }

  /**
   * Writes what was recorded up to now: each batch of rows is one COPY (a statement of its
   * own, atomic without a transaction), then, with `stamps`, the keys' "last used" and the
   * hourly counts in one more statement: two statements where a transaction took six
   * (begin, set, copy, update, insert, commit). The connection commits asynchronously
   * (`createSql`'s `asyncCommit`): a crash may lose the last moment of the log, as the
   * in-memory buffer already can. Rows recorded while it runs wait for the next flush:
   * chasing them would turn the interval into a stream of tiny statements.
   */
  private async drain(stamps: boolean) {
    this.release(this.closing ? Infinity : Math.floor((Date.now() - FOLD_GRACE_MS) / 1000));
    const chunks = this.rows.take();
    for (let i = 0; i < chunks.length; i += BATCH_CHUNKS) {
      const batch = chunks.slice(i, i + BATCH_CHUNKS);
      try {
        await this.copy(batch);
      } catch (err) {
        // keep what was not written for the next flush (the stamps wait with it)
        this.rows.restore(chunks.slice(i));
        return this.failed(err);
      }
      for (const c of batch) this.written += c.rows;
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
  }

  /** One COPY: Postgres's cheapest way in, and its binary form needs no parsing. Failed past COPY_DEADLINE_MS. */
  private async copy(batch: Chunk[]) {
    const query = this.sql.unsafe(
      `copy activity_batches (${COPY_COLUMNS}) from stdin with (format binary)`,
    ) as ReturnType<Sql['unsafe']> & { copyIn?: Buffer };
    query.copyIn = copyMessages(batch);
    const ms = this.copyDeadlineMs;
    try {
      await withDeadline(query, ms, () => new Error(`the activity COPY was not confirmed within ${ms} ms`));
    } catch (err) {
      // still running (or waiting its turn): cancelled, so its rows, which go back for the next flush, never land twice;
      // a cancel that cannot reach Postgres is only logged (our postgres.js patch hands back its promise)
      (query.cancel() as unknown as Promise<void>).catch((e) =>
        log('warn', 'activity COPY could not be cancelled', { error: String(e) }),
      );
      throw err;
    }
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
