import type { Db, Tx } from '@studio/shared/io';
import type { Occurrence } from '@studio/shared/schemas';
import { type OccurrenceRow as Row, selectOccurrence, toOccurrence } from '../kit/occurrences';
import { afterSql, type Page, type PageParams, pageOf } from '../kit/pagination';

/** Keyset on (starts_at, id) over the `occurrences_schedule` index, with the cursor's filters. */
export async function listSchedulePage(db: Db, studioId: string, p: PageParams): Promise<Page<Occurrence>> {
  const f = p.filters;
  const rows = await db<Row[]>`
    ${selectOccurrence(db)}
    where o.studio_id = ${studioId}
      ${f.from ? db`and o.starts_at >= ${f.from}::timestamptz` : db``}
      ${f.to ? db`and o.starts_at < ${f.to}::timestamptz` : db``}
      ${f.classId ? db`and o.class_id = ${f.classId}` : db``}
      ${f.instructorId ? db`and o.instructor_id = ${f.instructorId}` : db``}
      ${afterSql(db, p, 'starts_at', 'o')}
    order by o.starts_at, o.id
    limit ${p.limit + 1}`;
  return pageOf(p, rows, toOccurrence);
}

/** An occurrence of the studio, cancelled or not; null for another studio's id. */
export async function getOccurrence(db: Db, studioId: string, id: string): Promise<Occurrence | null> {
  const [row] = await db<Row[]>`${selectOccurrence(db)} where o.studio_id = ${studioId} and o.id = ${id}`;
  return row ? toOccurrence(row) : null;
}

export async function lockOccurrence(tx: Tx, studioId: string, id: string) {
  const [row] = await tx<{ id: string; status: string; durationMinutes: number; started: boolean }[]>`
    select id, status, duration_minutes, starts_at <= now() as started from occurrences
    where studio_id = ${studioId} and id = ${id} for update`;
  return row;
}

export async function moveOccurrence(tx: Tx, studioId: string, id: string, startsAt: Date, durationMinutes: number) {
  await tx`
    update occurrences set starts_at = ${startsAt}, duration_minutes = ${durationMinutes},
      ends_at = ${new Date(startsAt.getTime() + durationMinutes * 60_000)}, updated_at = now()
    where studio_id = ${studioId} and id = ${id}`;
}
