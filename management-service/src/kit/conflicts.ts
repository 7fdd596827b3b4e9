import { type AppError, iso, problems } from '@studio/shared';
import type { Db } from '@studio/shared/io';

/**
 * The occurrence a double-booking clashed with, read after the failed transaction from the
 * exclusion constraint's own report: `… conflicts with existing key (studio_id, instructor_id,
 * tstzrange(…))=(std_…, ins_…, ["2026-12-01 18:00:00+00","2026-12-01 19:00:00+00"))`.
 */
export async function doubleBookedWithConflict(sql: Db, studioId: string, err: unknown): Promise<AppError | null> {
  const detail = String((err as { detail?: unknown })?.detail ?? '');
  const existing = detail.slice(detail.indexOf('conflicts with existing key'));
  const m = /\)=\((.+), \["([^"]+)","([^"]+)"\)\)/.exec(existing);
  if (!m) return null;
  const instructorId = m[1]!.split(', ').pop()!; // the key is (studio_id, instructor_id, range)
  const startsAt = m[2];
  const [row] = await sql<{ id: string; classId: string; startsAt: Date; endsAt: Date }[]>`
    select id, class_id, starts_at, ends_at from occurrences
    where studio_id = ${studioId} and instructor_id = ${instructorId!} and starts_at = ${startsAt!}::timestamptz and status = 'scheduled'
    limit 1`;
  return row
    ? problems.doubleBooked({ id: row.id, classId: row.classId, startsAt: iso(row.startsAt), endsAt: iso(row.endsAt) })
    : null;
}
