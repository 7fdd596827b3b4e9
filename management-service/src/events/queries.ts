import type { EventResource } from '@studio/shared';
import { iso } from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { Event } from '@studio/shared/schemas';

/** A place in a studio's feed: the (xid, seq) of an event, as text (xid8 and bigint exceed a JS number). */
export interface Position {
  xid: string;
  seq: string;
}

interface Row {
  xid: string;
  seq: string;
  id: string;
  type: Event['type'];
  resource: EventResource;
  createdAt: Date;
  data: Event['data'];
  requestId: string | null;
}

/** The event as the feed serves it and a webhook carries it (shared/src/io/webhooks/body.ts writes the same fields in the same order). */
const toEvent = (r: Row): Event => ({
  id: r.id,
  type: r.type,
  createdAt: iso(r.createdAt),
  data: r.data,
  requestId: r.requestId,
});

/**
 * Only what every reader will always see in the same place: events of transactions that have all
 * ended. Every transaction still running, and every later one, has an xid at or above the
 * snapshot's xmin (docs/design/events.md). Stable within a statement, so it bounds the index scan.
 */
const SERVED = 'xid < pg_snapshot_xmin(pg_current_snapshot())';
// (the columns are read as text, under their own names: every ORDER BY names the table's column, `events.xid`, so it sorts xids, not text)

/** A filtered page reads at most this many events of the feed, so its cost stays bounded however rare its matches. */
export const SCAN_WINDOW = 1000;

export interface PageAsk {
  from: Position | null;
  limit: number;
  /** null: every type. */
  types: string[] | null;
  /** null: every resource (a key that reads them all). */
  resources: EventResource[] | null;
}

/** Events of the page, and where the next page starts (null: the end of the feed for now). */
export interface FeedPage {
  events: Event[];
  next: Position | null;
}

const after = (db: Db, from: Position | null) =>
  from ? db`and (xid, seq) > (${from.xid}::xid8, ${from.seq}::bigint)` : db``;

type PageRow = Row & { edge: boolean; scanned: number };

/**
 * The query of one page of a studio's feed in (xid, seq) order, over the primary key: an index
 * range scan stopped by the LIMIT, whatever the feed's length. With a type or resource filter it
 * scans at most `SCAN_WINDOW` events and adds one `edge` row: where that scan stopped, and how far
 * it got. `scripts/bench/events-plan.ts` explains these very queries at 10 million events.
 */
export function pageQuery(db: Db, studioId: string, a: PageAsk) {
  if (!a.types && !a.resources) {
    return db<PageRow[]>`
      select xid::text as xid, seq::text as seq, id, type, resource, created_at, data, request_id, false as edge, 0 as scanned from events
      where studio_id = ${studioId} and ${db.unsafe(SERVED)} ${after(db, a.from)}
      order by events.xid, events.seq limit ${a.limit + 1}`;
  }
  return db<PageRow[]>`
    with scan as materialized (
      select xid, seq, type, resource from events
      where studio_id = ${studioId} and ${db.unsafe(SERVED)} ${after(db, a.from)}
      order by xid, seq limit ${SCAN_WINDOW}
    ), hits as (
      select xid, seq from scan
      where true ${a.types ? db`and type = any(${a.types})` : db``} ${a.resources ? db`and resource = any(${a.resources})` : db``}
      order by xid, seq limit ${a.limit + 1}
    )
    (select e.xid::text as xid, e.seq::text as seq, e.id, e.type, e.resource, e.created_at, e.data, e.request_id, false as edge, 0 as scanned
     from hits join events e on e.studio_id = ${studioId} and e.xid = hits.xid and e.seq = hits.seq
     order by e.xid, e.seq)
    union all
    (select xid::text, seq::text, null, null, null, null, null, null, true, (select count(*)::int from scan) from scan order by scan.xid desc, scan.seq desc limit 1)`;
}

/** One page of the feed; a filtered page may hold fewer than `limit` events while `next` is set. */
export async function eventsPage(db: Db, studioId: string, a: PageAsk): Promise<FeedPage> {
  const rows = await pageQuery(db, studioId, a);
  // (a union's branches come back in order in practice; sorting up to 101 rows here makes it certain)
  const hits = rows.filter((r) => !r.edge).sort(byPlace);
  const edge = rows.find((r) => r.edge);
  const page = hits.slice(0, a.limit);
  const last = page.at(-1);
  const next =
    hits.length > a.limit && last ? position(last) : edge && edge.scanned >= SCAN_WINDOW ? position(edge) : null;
  return { events: page.map(toEvent), next };
}

const position = (r: { xid: string; seq: string }): Position => ({ xid: r.xid, seq: r.seq });
const byPlace = (a: Position, b: Position) => {
  const d = BigInt(a.xid) - BigInt(b.xid) || BigInt(a.seq) - BigInt(b.seq);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
};

/** The query of `findEvent` (over the `(studio_id, id)` unique index). */
export const findQuery = (db: Db, studioId: string, id: string) => db<Row[]>`
  select xid::text as xid, seq::text as seq, id, type, resource, created_at, data, request_id from events
  where studio_id = ${studioId} and id = ${id}`;

/** An event of the studio by id, with its place in the feed; null for an unknown id or another studio's. */
export async function findEvent(
  db: Db,
  studioId: string,
  id: string,
): Promise<{ event: Event; resource: EventResource; at: Position } | null> {
  const [row] = await findQuery(db, studioId, id);
  return row ? { event: toEvent(row), resource: row.resource, at: position(row) } : null;
}

/** Events created before this instant may have been deleted by retention; null while it has deleted none. */
export async function deletedBefore(db: Db): Promise<Date | null> {
  const [row] = await db<{ deletedBefore: Date | null }[]>`
    select nullif(deleted_before, '-infinity') as deleted_before from events_retention`;
  return row?.deletedBefore ?? null;
}
