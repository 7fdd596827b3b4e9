import { AppError, iso, isoOrNull, problems } from '@studio/shared';
import type { Tx } from '@studio/shared/db';
import type { Occurrence, RescheduleBody } from '@studio/shared/schemas/schedule';
import type { WriteResult } from '../kit/write';
import { futureInstant, requireStorable } from '../classes/service';
import * as q from './queries';

export const occurrenceJson = (r: q.OccurrenceRow): Occurrence => ({
  id: r.id,
  classId: r.classId,
  title: r.title,
  mode: r.mode as Occurrence['mode'],
  startsAt: iso(r.startsAt),
  endsAt: iso(r.endsAt),
  durationMinutes: r.durationMinutes,
  instructorId: r.instructorId,
  locationId: r.locationId,
  roomId: r.roomId,
  capacity: r.capacity,
  status: r.status as Occurrence['status'],
  cancelledAt: isoOrNull(r.cancelledAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/**
 * Moves one occurrence: 404 when not in this studio, 409 when cancelled, 422 into the
 * past, and 409 `instructor_double_booked` from the exclusion constraint on overlap.
 */
export async function rescheduleOccurrence(tx: Tx, studioId: string, id: string, body: RescheduleBody): Promise<WriteResult> {
  const occ = await q.lockOccurrence(tx, studioId, id);
  if (!occ) throw problems.notFound('occurrence', id);
  if (occ.status === 'cancelled') throw new AppError('occurrence_cancelled', { detail: 'A cancelled occurrence cannot be rescheduled.' });
  const startsAt = futureInstant(body.startsAt);
  const duration = body.durationMinutes ?? occ.durationMinutes;
  requireStorable(startsAt.getTime() + duration * 60_000, '/body/startsAt', 'the occurrence\'s end');
  await q.moveOccurrence(tx, studioId, id, startsAt, duration);
  const row = await q.getOccurrence(tx, studioId, id);
  return { status: 200, body: occurrenceJson(row!) };
}
