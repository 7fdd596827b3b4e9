import { log } from '@studio/shared';
import type { Db, Sql } from '@studio/shared/io';

/** docs/design/events.md: the feed keeps 30 days. */
export const EVENT_RETENTION_MS = 30 * 86_400_000;
/** Rows per delete: each batch is its own short transaction, so retention never holds back the feed's xmin or locks for long. */
export const RETENTION_BATCH = 1000;
export const RETENTION_EVERY_MS = 5 * 60_000;

/** One batch: the oldest `batch` events before the recorded cutoff, found on `events_created`. */
export const deleteBatch = (db: Db, batch: number) => db`
  delete from events e using (
    select studio_id, xid, seq from events
    where created_at < (select deleted_before from events_retention)
    order by created_at limit ${batch}
  ) old
  where e.studio_id = old.studio_id and e.xid = old.xid and e.seq = old.seq`;

/**
 * Deletes the events older than the retention, `batch` rows per statement, each statement its own
 * transaction. One replica at a time (a session advisory lock on a reserved connection, released
 * if the process dies); another finds it taken and returns null. The cutoff is recorded first, in
 * `events_retention`, so that while and after the rows go, an `after=` naming one of them is 410,
 * not 404; and only when some event is older than it, so that a made-up id is 404 until then.
 */
export async function deleteExpiredEvents(
  sql: Sql,
  o: { retentionMs?: number; batch?: number; stopping?: () => boolean } = {},
): Promise<number | null> {
  const retentionMs = o.retentionMs ?? EVENT_RETENTION_MS;
  const batch = o.batch ?? RETENTION_BATCH;
  const conn = await sql.reserve();
  try {
    const [lock] = await conn<
      { locked: boolean }[]
    >`select pg_try_advisory_lock(hashtextextended('studio events retention', 0)) as locked`;
    if (!lock?.locked) return null;
    try {
      // the cutoff moves only when there is something before it to delete: until retention deletes an event, no id is 410
      await conn`
        with cutoff as (select now() - make_interval(secs => ${retentionMs / 1000}) as at)
        update events_retention set deleted_before = greatest(deleted_before, cutoff.at) from cutoff
        where exists (select 1 from events where created_at < cutoff.at)`;
      let deleted = 0;
      for (;;) {
        const done = await deleteBatch(conn, batch);
        deleted += done.count;
        if (done.count < batch || o.stopping?.()) return deleted;
      }
    } finally {
      await conn`select pg_advisory_unlock(hashtextextended('studio events retention', 0))`;
    }
  } finally {
    conn.release();
  }
}

/** Runs `deleteExpiredEvents` every few minutes in a Management process; `stop` waits for a run in progress (it ends after its batch). */
export function startEventRetention(sql: Sql, o: { everyMs?: number; retentionMs?: number } = {}) {
  const everyMs = o.everyMs ?? RETENTION_EVERY_MS;
  let stopped = false;
  let running: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout>;
  const schedule = (ms: number) => {
    timer = setTimeout(run, ms);
    timer.unref?.();
  };
  function run() {
    running = deleteExpiredEvents(sql, { retentionMs: o.retentionMs, stopping: () => stopped })
      .then((deleted) => {
        if (deleted) log('info', 'events deleted by retention', { deleted });
      })
      .catch((err) => log('warn', 'events retention failed; it runs again later', { error: String(err) }))
      .finally(() => {
        running = null;
        if (!stopped) schedule(everyMs);
      });
  }
  // a first run soon after start, spread so that replicas started together do not all try at once
  schedule(Math.round(Math.random() * Math.min(everyMs, 30_000)));
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
