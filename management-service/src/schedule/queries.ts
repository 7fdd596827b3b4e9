import type { Sql, Tx } from '@studio/shared/db';
import { afterSql, sortKeySql, type PageParams } from '../kit/pagination';

type Db = Sql | Tx;

export interface OccurrenceRow {
  id: string;
  classId: string;
  title: string;
  mode: string;
  startsAt: Date;
  endsAt: Date;
  durationMinutes: number;
  instructorId: string;
  locationId: string | null;
  roomId: string | null;
  capacity: number | null;
  status: string;
  cancelledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  sortKey: string;
}

const selectOccurrence = (db: Db) => db`
  select o.id, o.class_id, c.title, c.mode, o.starts_at, o.ends_at, o.duration_minutes, o.instructor_id,
         o.location_id, o.room_id, o.capacity, o.status, o.cancelled_at, o.created_at, o.updated_at,
         ${sortKeySql(db, 'o.starts_at')} as sort_key
  from occurrences o join classes c on c.id = o.class_id`;

/** Keyset on (starts_at, id) over the `occurrences_schedule` index, with the cursor's filters. */
export async function listOccurrences(db: Db, studioId: string, p: PageParams): Promise<OccurrenceRow[]> {
  const f = p.filters;
  return db<OccurrenceRow[]>`
    ${selectOccurrence(db)}
    where o.studio_id = ${studioId}
      ${f.from ? db`and o.starts_at >= ${f.from}::timestamptz` : db``}
      ${f.to ? db`and o.starts_at < ${f.to}::timestamptz` : db``}
      ${f.classId ? db`and o.class_id = ${f.classId}` : db``}
      ${f.instructorId ? db`and o.instructor_id = ${f.instructorId}` : db``}
      ${afterSql(db, p, 'starts_at', 'o')}
    order by o.starts_at, o.id
    limit ${p.limit + 1}`;
}

export async function getOccurrence(db: Db, studioId: string, id: string): Promise<OccurrenceRow | undefined> {
  const [row] = await db<OccurrenceRow[]>`${selectOccurrence(db)} where o.studio_id = ${studioId} and o.id = ${id}`;
  return row;
}

export async function lockOccurrence(tx: Tx, studioId: string, id: string) {
  const [row] = await tx<{ id: string; status: string; durationMinutes: number }[]>`
    select id, status, duration_minutes from occurrences where studio_id = ${studioId} and id = ${id} for update`;
  return row;
}

export async function moveOccurrence(tx: Tx, studioId: string, id: string, startsAt: Date, durationMinutes: number) {
  await tx`
    update occurrences set starts_at = ${startsAt}, duration_minutes = ${durationMinutes},
      ends_at = ${new Date(startsAt.getTime() + durationMinutes * 60_000)}, updated_at = now()
    where studio_id = ${studioId} and id = ${id}`;
}
