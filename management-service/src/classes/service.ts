import { AppError, newId, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import type { Class, CreateClassBody, UpdateClassBody } from '@studio/shared/schemas';
import { changedFields, event, updated, type Written } from '../kit/events';
import { futureInstant, requireStorable } from '../kit/instants';
import { occurrencesOfClass } from '../kit/occurrences';
import * as q from './queries';

const DAY_MS = 86_400_000;

async function requireInstructor(tx: Tx, studioId: string, id: string) {
  if (!(await q.liveInstructor(tx, studioId, id)))
    throw new AppError('unknown_instructor', { detail: `No active instructor ${quote(id)} in this studio.` });
}

async function requirePlans(tx: Tx, studioId: string, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const live = await q.livePlans(tx, studioId, unique);
  const missing = unique.filter((id) => !live.has(id));
  if (missing.length)
    throw new AppError('unknown_plan', { detail: `No active plan ${quote(missing.join(', '))} in this studio.` });
  return unique;
}

/** Location and room of an in-person class: both live, and the room inside the location. */
async function placeOf(tx: Tx, studioId: string, locationId?: string, roomId?: string) {
  if (locationId && !(await q.liveLocation(tx, studioId, locationId)))
    throw new AppError('unknown_location', { detail: `No location ${quote(locationId)} in this studio.` });
  if (!roomId) return { locationId: locationId ?? null, roomId: null };
  const room = await q.liveRoom(tx, studioId, roomId);
  if (!room || (locationId && room.locationId !== locationId))
    throw new AppError('unknown_room', {
      detail: `No room ${quote(roomId)} in ${locationId ? quote(locationId) : 'this studio'}.`,
    });
  return { locationId: room.locationId, roomId };
}

/** The class as a write leaves it (its plans and occurrence summary read back in the write's transaction). */
async function readClass(tx: Tx, studioId: string, id: string): Promise<Class> {
  const klass = await q.getClass(tx, studioId, id);
  if (!klass) throw problems.notFound('class');
  return klass;
}

/**
 * Creates the class and every occurrence in one transaction. The exclusion constraint
 * `occurrences_no_double_booking` turns any overlap (with other classes, or between
 * concurrent requests) into 409 and rolls back the whole class.
 */
export async function createClass(
  tx: Tx,
  studioId: string,
  body: CreateClassBody,
): Promise<Written<Class, 'class.created' | 'occurrence.created'>> {
  const startsAt = futureInstant(body.startsAt, '/body/startsAt', 'occurrence_in_past');
  const count = body.recurrence?.count ?? 1;
  const step = (body.recurrence?.intervalDays ?? 1) * DAY_MS;
  const lastStart = startsAt.getTime() + (count - 1) * step;
  requireStorable(lastStart, body.recurrence ? '/body/recurrence' : '/body/startsAt', "the last occurrence's start");
  requireStorable(
    lastStart + body.durationMinutes * 60_000,
    body.recurrence ? '/body/recurrence' : '/body/startsAt',
    "the last occurrence's end",
  );
  if (!(await q.studioModes(tx, studioId)).includes(body.mode)) {
    throw new AppError('unsupported_channel', { detail: `Mode ${body.mode} is not enabled for this studio.` });
  }
  await requireInstructor(tx, studioId, body.instructorId);
  const planIds = await requirePlans(tx, studioId, body.planIds ?? []);
  const place = await placeOf(tx, studioId, body.locationId, body.roomId);
  const id = newId('class');
  await q.insertClass(tx, {
    id,
    studioId,
    title: body.title,
    mode: body.mode,
    instructorId: body.instructorId,
    startsAt,
    durationMinutes: body.durationMinutes,
    discipline: body.discipline ?? null,
    level: body.level ?? 'all_levels',
    capacity: body.capacity ?? null,
    visibility: body.visibility ?? 'public',
    ...place,
    recurrence: body.recurrence ? tx.json(body.recurrence) : null,
  });
  await q.setPlans(tx, studioId, id, planIds);
  const occurrences = Array.from({ length: count }, (_, i) => {
    const start = new Date(startsAt.getTime() + i * step);
    return {
      id: newId('occurrence'),
      studioId,
      classId: id,
      instructorId: body.instructorId,
      startsAt: start,
      endsAt: new Date(start.getTime() + body.durationMinutes * 60_000),
      durationMinutes: body.durationMinutes,
      ...place,
      capacity: body.capacity ?? null,
    };
  });
  await q.insertOccurrences(tx, occurrences);
  const klass = await readClass(tx, studioId, id);
  const created = await occurrencesOfClass(tx, studioId, id);
  return {
    record: klass,
    events: [event('class.created', klass), ...created.map((o) => event('occurrence.created', o))],
  };
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * PATCH: instructor, duration and capacity also apply to the occurrences that have not started.
 * Only what differs is written: values the class (or an occurrence) already has change nothing,
 * not even `updatedAt`, and record no event.
 */
export async function updateClass(
  tx: Tx,
  studioId: string,
  id: string,
  body: UpdateClassBody,
): Promise<Written<Class, 'class.updated' | 'occurrence.updated'>> {
  // which class first (404), then whether it may change (409), then the values (422)
  const locked = await q.lockClass(tx, studioId, id);
  if (!locked) throw problems.notFound('class', id);
  const before = await readClass(tx, studioId, id);
  const { planIds: _plans, ...own } = body;
  const fields = changedFields(before, own);
  const plansChanged = body.planIds !== undefined && !sameSet([...new Set(body.planIds)], before.planIds);
  // cancelling is final: a PATCH that would change a cancelled class is refused (one that changes nothing answers it)
  if (locked.status === 'cancelled' && (Object.keys(fields).length || plansChanged))
    throw new AppError('class_cancelled', {
      detail: 'This class was cancelled, and a cancelled class is final: create a new class for the slot instead.',
    });
  if (body.durationMinutes !== undefined) {
    const last = await q.lastFutureStart(tx, studioId, id);
    if (last)
      requireStorable(
        last.getTime() + body.durationMinutes * 60_000,
        '/body/durationMinutes',
        "the last occurrence's end",
      );
  }
  // the instructor is judged whenever named: it goes on the occurrences too, which may differ from the class
  if (body.instructorId !== undefined) await requireInstructor(tx, studioId, body.instructorId);
  // plans are the class's own: the ones it already has change nothing, even one archived since (a client sending
  // the record back)
  const planIds = plansChanged ? await requirePlans(tx, studioId, body.planIds!) : undefined;
  if (planIds) await q.setPlans(tx, studioId, id, planIds);
  if (Object.keys(fields).length || plansChanged) await q.updateClass(tx, studioId, id, fields);
  const occurrenceEvents =
    body.instructorId !== undefined || body.durationMinutes !== undefined || body.capacity !== undefined
      ? await updateFutureOccurrences(tx, studioId, id, body)
      : [];
  const klass = await readClass(tx, studioId, id);
  return { record: klass, events: [...updated('class.updated', before, klass), ...occurrenceEvents] };
}

/** The class's new instructor, duration or capacity on its occurrences that have not started: one event for each one changed. */
async function updateFutureOccurrences(tx: Tx, studioId: string, id: string, body: UpdateClassBody) {
  // locked as read: a reschedule committing meanwhile would otherwise show in this change's previousAttributes
  const before = new Map(
    (await occurrencesOfClass(tx, studioId, id, { future: true, locked: true })).map((o) => [o.id, o]),
  );
  const changed = await q.updateFutureOccurrences(tx, studioId, id, {
    instructorId: body.instructorId,
    durationMinutes: body.durationMinutes,
    capacity: body.capacity,
  });
  const after = await occurrencesOfClass(tx, studioId, id, { ids: changed });
  return after.flatMap((o) => updated('occurrence.updated', before.get(o.id)!, o));
}

/**
 * DELETE: the class and its future occurrences become cancelled (past ones stay as history).
 * Cancelling a cancelled class changes nothing and records nothing.
 */
export async function cancelClass(
  tx: Tx,
  studioId: string,
  id: string,
): Promise<Written<Class, 'class.cancelled' | 'occurrence.cancelled'>> {
  const row = await q.lockClass(tx, studioId, id);
  if (!row) throw problems.notFound('class', id);
  const cancelledIds = await q.cancelClass(tx, studioId, id);
  const klass = await readClass(tx, studioId, id);
  const cancelled = await occurrencesOfClass(tx, studioId, id, { ids: cancelledIds });
  return {
    record: klass,
    events: [
      ...(row.status === 'cancelled' ? [] : [event('class.cancelled', klass)]),
      ...cancelled.map((o) => event('occurrence.cancelled', o)),
    ],
  };
}
