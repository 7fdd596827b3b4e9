import type { Sql } from '@studio/shared/db';
import { finished } from 'node:stream/promises';
import { log } from '@studio/shared';

export interface ActivityEntry {
  studioId: string;
  keyId: string;
  operationId: string | null;
  method: string;
  path: string;
  status: number;
  outcome: 'success' | 'client_error' | 'server_error';
  durationMs: number;
  requestId: string;
  /** When the request arrived, in ms since the epoch. */
  at: number;
}

/** COPY text format escapes for free text; ids, codes, numbers and times we made need none. */
const copyText = (v: string) =>
  /[\\\t\n\r]/.test(v) ? v.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : v;
/** Requests arrive many to a millisecond under load: format each millisecond once. */
let isoMs = Number.NaN;
let iso = '';
const isoOf = (ms: number) => (ms === isoMs ? iso : ((isoMs = ms), (iso = new Date(ms).toISOString())));
const copyLine = (e: ActivityEntry) =>
  `${e.studioId}\t${e.keyId}\t${e.operationId ?? '\\N'}\t${copyText(e.method)}\t${copyText(e.path)}\t${e.status}\t${e.outcome}\t${e.durationMs}\t${e.requestId}\t${isoOf(e.at)}\n`;

export const outcomeOf = (status: number): ActivityEntry['outcome'] =>
  status >= 500 ? 'server_error' : status >= 400 ? 'client_error' : 'success';

const MAX_BUFFER = 50_000;
const BATCH = 5_000;
const RETENTION_DAYS = 90;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * Activity rows and last-used stamps, written in batches off the request path.
 * Each entry becomes its COPY line at once, so the buffer holds plain strings rather
 * than thousands of live objects. A failed flush keeps the rows for the next one
 * (bounded); `close` flushes all.
 */
export class ActivityWriter {
  private lines: string[] = [];
  /** Newest use per key since the last flush, in ms. */
  private lastUsed = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushing: Promise<void> | null = null;
  private pruner: ReturnType<typeof setInterval> | null = null;

  constructor(private sql: Sql, private intervalMs = 500) {}

  start() {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.pruner ??= setInterval(() => void this.prune(), PRUNE_EVERY_MS);
  }

  /** Retention: entries older than 90 days go, a bounded batch at a time. */
  async prune(): Promise<number> {
    try {
      const rows = await this.sql`
        delete from activity where id in (
          select id from activity where at < now() - make_interval(days => ${RETENTION_DAYS}) limit 10000)`;
      return rows.count;
    } catch (err) {
      log('warn', 'activity prune failed', { error: String(err) });
      return 0;
    }
  }

  record(e: ActivityEntry) {
    if (this.lines.length >= MAX_BUFFER) this.lines.shift();
    this.lines.push(copyLine(e));
    this.lastUsed.set(e.keyId, e.at);
  }

  flush(): Promise<void> {
    this.flushing ??= this.drain().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async drain() {
    while (this.lines.length || this.lastUsed.size) {
      const batch = this.lines.slice(0, BATCH);
      const used = this.lastUsed;
      this.lastUsed = new Map();
      try {
        await this.sql.begin(async (tx) => {
          // a crash may lose the last moment of the log, as the in-memory buffer already can; no fsync wait per batch
          await tx`set local synchronous_commit = off`;
          if (batch.length) {
            // COPY is Postgres's cheapest way in: one text stream, no per-row parameters
            const stream = await tx`copy activity (studio_id, key_id, operation_id, method, path, status, outcome, duration_ms, request_id, at) from stdin`.writable();
            stream.write(batch.join(''));
            stream.end();
            await finished(stream);
          }
          if (used.size) {
            await tx`
              update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
              from unnest(${[...used.keys()]}::text[], ${[...used.values()].map((ms) => new Date(ms).toISOString())}::timestamptz[]) as u(id, at)
              where k.id = u.id`;
          }
        });
        this.lines.splice(0, batch.length);
      } catch (err) {
        // keep what was not written; a newer use recorded meanwhile wins
        for (const [id, ms] of used) if ((this.lastUsed.get(id) ?? 0) < ms) this.lastUsed.set(id, ms);
        log('warn', 'activity flush failed; will retry', { error: String(err), pending: this.lines.length });
        return;
      }
    }
  }

  async close() {
    if (this.timer) clearInterval(this.timer);
    if (this.pruner) clearInterval(this.pruner);
    this.timer = this.pruner = null;
    await this.flush();
  }
}
