import { iso, isoOrNull } from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { Occurrence } from '@studio/shared/schemas';
import { sortKeySql } from './pagination';

/**
 * An occurrence as the API shows it (GET /v1/schedule/{occurrenceId}): read by the schedule, and by
 * the class writes whose events carry the occurrences they create, change or cancel.
 */
export interface OccurrenceRow {
  id: string;
  classId: string;
  title: string;
  mode: Occurrence['mode'];
  startsAt: Date;
  endsAt: Date;
  durationMinutes: number;
  instructorId: string;
  locationId: string | null;
  roomId: string | null;
  capacity: number | null;
  status: Occurrence['status'];
  cancelledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  sortKey: string;
}

export const toOccurrence = (r: OccurrenceRow): Occurrence => ({
  id: r.id,
  classId: r.classId,
  title: r.title,
  mode: r.mode,
  startsAt: iso(r.startsAt),
  endsAt: iso(r.endsAt),
  durationMinutes: r.durationMinutes,
  instructorId: r.instructorId,
  locationId: r.locationId,
  roomId: r.roomId,
  capacity: r.capacity,
  status: r.status,
  cancelledAt: isoOrNull(r.cancelledAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** `select … from occurrences o join classes c`: add the `where`. */
export const selectOccurrence = (db: Db) => db`
  select o.id, o.class_id, c.title, c.mode, o.starts_at, o.ends_at, o.duration_minutes, o.instructor_id,
         o.location_id, o.room_id, o.capacity, o.status, o.cancelled_at, o.created_at, o.updated_at,
         ${sortKeySql(db, 'o.starts_at')} as sort_key
  from occurrences o join classes c on c.studio_id = o.studio_id and c.id = o.class_id`;

/**
 * Occurrences of a class as GET shows them, in schedule order: those named by `ids`, or those
 * that have not started (`future`), or all of them.
 */
export async function occurrencesOfClass(
  db: Db,
  studioId: string,
  classId: string,
  only: { ids?: string[]; future?: true; locked?: true } = {},
): Promise<Occurrence[]> {
  if (only.ids && !only.ids.length) return [];
  const rows = await db<OccurrenceRow[]>`
    ${selectOccurrence(db)}
    where o.studio_id = ${studioId} and o.class_id = ${classId}
      ${only.ids ? db`and o.id = any(${only.ids})` : db``} ${only.future ? db`and o.starts_at > now()` : db``}
    order by o.starts_at, o.id ${only.locked ? db`for update of o` : db``}`;
  return rows.map(toOccurrence);
}
