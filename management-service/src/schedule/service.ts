import { AppError, problems } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import type { Occurrence, RescheduleBody } from '@studio/shared/schemas';
import { unchanged, updated, type Written } from '../kit/events';
import { futureInstant, requireStorable } from '../kit/instants';
import * as q from './queries';

/**
 * Moves one occurrence: 404 when not in this studio, 409 when cancelled, 422 into the
 * past or when it has already started (it is history: a cancelled class keeps its past
 * occurrences, a deleted venue the ones held there), and 409 `instructor_double_booked` from the
 * exclusion constraint on overlap. A move to where it already is changes nothing and records nothing.
 */
export async function rescheduleOccurrence(
  tx: Tx,
  studioId: string,
  id: string,
  body: RescheduleBody,
): Promise<Written<Occurrence, 'occurrence.rescheduled'>> {
  const occ = await q.lockOccurrence(tx, studioId, id);
  if (!occ) throw problems.notFound('occurrence', id);
  if (occ.status === 'cancelled')
    throw new AppError('occurrence_cancelled', { detail: 'A cancelled occurrence cannot be rescheduled.' });
  if (occ.started)
    throw new AppError('occurrence_in_past', {
      detail:
        'This occurrence has already started: it stays as history and cannot be moved. Create a class for a new slot.',
    });
  const startsAt = futureInstant(body.startsAt, '/body/startsAt', 'occurrence_in_past');
  const duration = body.durationMinutes ?? occ.durationMinutes;
  requireStorable(startsAt.getTime() + duration * 60_000, '/body/startsAt', "the occurrence's end");
  const before = (await q.getOccurrence(tx, studioId, id))!;
  if (Date.parse(before.startsAt) === startsAt.getTime() && before.durationMinutes === duration)
    return unchanged(before);
  await q.moveOccurrence(tx, studioId, id, startsAt, duration);
  const after = (await q.getOccurrence(tx, studioId, id))!;
  return { record: after, events: updated('occurrence.rescheduled', before, after) };
}
