import { iso, isoOrNull } from '@studio/shared';
import type { Db, Tx } from '@studio/shared/io';
import type { Class } from '@studio/shared/schemas';
import { afterSql, type Page, type PageParams, pageOf, sortKeySql } from '../kit/pagination';

interface Row {
  id: string;
  title: string;
  mode: Class['mode'];
  instructorId: string;
  startsAt: Date;
  durationMinutes: number;
  discipline: string | null;
  level: Class['level'];
  capacity: number | null;
  visibility: Class['visibility'];
  planIds: string[];
  locationId: string | null;
  roomId: string | null;
  recurrence: Class['recurrence'];
  status: Class['status'];
  occurrenceCount: number;
  nextOccurrenceAt: Date | null;
  cancelledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  sortKey: string;
}

const toClass = (r: Row): Class => ({
  id: r.id,
  title: r.title,
  mode: r.mode,
  instructorId: r.instructorId,
  startsAt: iso(r.startsAt),
  durationMinutes: r.durationMinutes,
  discipline: r.discipline,
  level: r.level,
  capacity: r.capacity,
  visibility: r.visibility,
  planIds: r.planIds,
  locationId: r.locationId,
  roomId: r.roomId,
  recurrence: r.recurrence,
  status: r.status,
  occurrenceCount: r.occurrenceCount,
  nextOccurrenceAt: isoOrNull(r.nextOccurrenceAt),
  cancelledAt: isoOrNull(r.cancelledAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** A class with its plans and occurrence summary (one index range per class, so a page stays cheap). */
const selectClass = (db: Db) => db`
  select c.id, c.title, c.mode, c.instructor_id, c.starts_at, c.duration_minutes, c.discipline, c.level, c.capacity,
         c.visibility, c.location_id, c.room_id, c.recurrence, c.status, c.cancelled_at, c.created_at, c.updated_at,
         ${sortKeySql(db, 'c.created_at')} as sort_key,
         coalesce((select array_agg(cp.plan_id order by cp.plan_id) from class_plans cp where cp.class_id = c.id), '{}') as plan_ids,
         o.occurrence_count, o.next_occurrence_at
  from classes c
  cross join lateral (
    select count(*) filter (where status = 'scheduled')::int as occurrence_count,
           min(starts_at) filter (where status = 'scheduled' and starts_at > now()) as next_occurrence_at
    from occurrences where class_id = c.id
  ) o`;

/** One page of the studio's classes, cancelled ones included, keyset on (created_at, id). */
export async function listClassesPage(db: Db, studioId: string, p: PageParams): Promise<Page<Class>> {
  const rows = await db<Row[]>`
    ${selectClass(db)}
    where c.studio_id = ${studioId} ${afterSql(db, p, 'created_at', 'c')}
    order by c.created_at, c.id
    limit ${p.limit + 1}`;
  return pageOf(p, rows, toClass);
}

/** A class of the studio, cancelled or not; null for another studio's id. */
export async function getClass(db: Db, studioId: string, id: string): Promise<Class | null> {
  const [row] = await db<Row[]>`${selectClass(db)} where c.studio_id = ${studioId} and c.id = ${id}`;
  return row ? toClass(row) : null;
}

/** Locks the class row for the rest of the transaction (PATCH / DELETE). */
export async function lockClass(tx: Tx, studioId: string, id: string) {
  const [row] = await tx<
    { id: string; status: string }[]
  >`select id, status from classes where studio_id = ${studioId} and id = ${id} for update`;
  return row;
}

export async function studioModes(db: Db, studioId: string): Promise<string[]> {
  const [row] = await db<{ enabledModes: string[] }[]>`select enabled_modes from studios where id = ${studioId}`;
  return row?.enabledModes ?? [];
}

export async function liveInstructor(db: Db, studioId: string, id: string): Promise<boolean> {
  const rows = await db`select 1 from instructors where studio_id = ${studioId} and id = ${id} and active for share`;
  return rows.length > 0;
}

/** The ids among `ids` that are active plans of the studio. */
export async function livePlans(db: Db, studioId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await db<
    { id: string }[]
  >`select id from plans where studio_id = ${studioId} and id = any(${ids}) and status = 'active' for share`;
  return new Set(rows.map((r) => r.id));
}

export async function liveLocation(db: Db, studioId: string, id: string): Promise<boolean> {
  return (
    (await db`select 1 from locations where studio_id = ${studioId} and id = ${id} and status = 'live' for share`)
      .length > 0
  );
}

export async function liveRoom(db: Db, studioId: string, id: string): Promise<{ locationId: string } | undefined> {
  const [row] = await db<
    { locationId: string }[]
  >`select location_id from rooms where studio_id = ${studioId} and id = ${id} and status = 'live' for share`;
  return row;
}

export async function insertClass(tx: Tx, row: Record<string, unknown>) {
  await tx`insert into classes ${tx(row)}`;
}

export async function insertOccurrences(tx: Tx, rows: Record<string, unknown>[]) {
  // chunks keep each statement well under the bind-parameter limit
  for (let i = 0; i < rows.length; i += 500) await tx`insert into occurrences ${tx(rows.slice(i, i + 500))}`;
}

export async function setPlans(tx: Tx, studioId: string, classId: string, planIds: string[]) {
  await tx`delete from class_plans where class_id = ${classId}`;
  if (planIds.length) await tx`insert into class_plans ${tx(planIds.map((planId) => ({ studioId, classId, planId })))}`;
}

export async function updateClass(tx: Tx, studioId: string, id: string, fields: Record<string, unknown>) {
  if (!Object.keys(fields).length) {
    await tx`update classes set updated_at = now() where studio_id = ${studioId} and id = ${id}`;
    return;
  }
  await tx`update classes set ${tx(fields)}, updated_at = now() where studio_id = ${studioId} and id = ${id}`;
}

/** The start of the class's last occurrence that has not started (those a new duration applies to). */
export async function lastFutureStart(tx: Tx, studioId: string, classId: string): Promise<Date | null> {
  const [row] = await tx<{ last: Date | null }[]>`
    select max(starts_at) as last from occurrences where studio_id = ${studioId} and class_id = ${classId} and starts_at > now()`;
  return row?.last ?? null;
}

/**
 * Applies instructor / duration / capacity to the class's occurrences that have not started, and
 * returns the ids of those it changed (one that already has the values is left as it is).
 */
export async function updateFutureOccurrences(
  tx: Tx,
  studioId: string,
  classId: string,
  f: { instructorId?: string; durationMinutes?: number; capacity?: number | null },
): Promise<string[]> {
  const instructorId = tx`coalesce(${f.instructorId ?? null}::text, instructor_id)`;
  const duration = tx`coalesce(${f.durationMinutes ?? null}::int, duration_minutes)`;
  const capacity = tx`case when ${f.capacity !== undefined} then ${f.capacity ?? null}::int else capacity end`;
  const rows = await tx<{ id: string }[]>`
    update occurrences set
      instructor_id = ${instructorId}, duration_minutes = ${duration},
      ends_at = starts_at + make_interval(mins => ${duration}), capacity = ${capacity}, updated_at = now()
    where studio_id = ${studioId} and class_id = ${classId} and starts_at > now() and status = 'scheduled'
      and (instructor_id, duration_minutes, capacity) is distinct from (${instructorId}, ${duration}, ${capacity})
    returning id`;
  return rows.map((r) => r.id);
}

/** Cancels a scheduled class (a cancelled one stays as it was) and its future occurrences; returns the ids of the occurrences it cancelled. */
export async function cancelClass(tx: Tx, studioId: string, id: string): Promise<string[]> {
  await tx`update classes set status = 'cancelled', cancelled_at = now(), updated_at = now()
           where studio_id = ${studioId} and id = ${id} and status <> 'cancelled'`;
  const rows = await tx<{ id: string }[]>`
    update occurrences set status = 'cancelled', cancelled_at = now(), updated_at = now()
    where studio_id = ${studioId} and class_id = ${id} and status = 'scheduled' and starts_at > now()
    returning id`;
  return rows.map((r) => r.id);
}
