import { AppError, newId, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/db';
import type { Class, CreateClassBody, UpdateClassBody } from '@studio/shared/schemas/classes';
import { futureInstant, requireStorable } from '../kit/instants';
import * as q from './queries';

const DAY_MS = 86_400_000;

async function requireInstructor(tx: Tx, studioId: string, id: string) {
  if (!(await q.liveInstructor(tx, studioId, id))) throw new AppError('unknown_instructor', { detail: `No active instructor ${quote(id)} in this studio.` });
}

async function requirePlans(tx: Tx, studioId: string, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const live = await q.livePlans(tx, studioId, unique);
  const missing = unique.filter((id) => !live.has(id));
  if (missing.length) throw new AppError('unknown_plan', { detail: `No active plan ${quote(missing.join(', '))} in this studio.` });
  return unique;
}

/** Location and room of an in-person class: both live, and the room inside the location. */
async function placeOf(tx: Tx, studioId: string, locationId?: string, roomId?: string) {
  if (locationId && !(await q.liveLocation(tx, studioId, locationId))) throw new AppError('unknown_location', { detail: `No location ${quote(locationId)} in this studio.` });
  if (!roomId) return { locationId: locationId ?? null, roomId: null };
  const room = await q.liveRoom(tx, studioId, roomId);
  if (!room || (locationId && room.locationId !== locationId)) throw new AppError('unknown_room', { detail: `No room ${quote(roomId)} in ${locationId ? quote(locationId) : 'this studio'}.` });
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
export async function createClass(tx: Tx, studioId: string, body: CreateClassBody): Promise<Class> {
  const startsAt = futureInstant(body.startsAt, '/body/startsAt', 'occurrence_in_past');
  const count = body.recurrence?.count ?? 1;
  const step = (body.recurrence?.intervalDays ?? 1) * DAY_MS;
  const lastStart = startsAt.getTime() + (count - 1) * step;
  requireStorable(lastStart, body.recurrence ? '/body/recurrence' : '/body/startsAt', 'the last occurrence\'s start');
  requireStorable(lastStart + body.durationMinutes * 60_000, body.recurrence ? '/body/recurrence' : '/body/startsAt', 'the last occurrence\'s end');
  if (!(await q.studioModes(tx, studioId)).includes(body.mode)) {
    throw new AppError('unsupported_channel', { detail: `Mode ${body.mode} is not enabled for this studio.` });
  }
  await requireInstructor(tx, studioId, body.instructorId);
  const planIds = await requirePlans(tx, studioId, body.planIds ?? []);
  const place = await placeOf(tx, studioId, body.locationId, body.roomId);
  const id = newId('class');
  await q.insertClass(tx, {
    id, studioId, title: body.title, mode: body.mode, instructorId: body.instructorId, startsAt,
    durationMinutes: body.durationMinutes, discipline: body.discipline ?? null, level: body.level ?? 'all_levels',
    capacity: body.capacity ?? null, visibility: body.visibility ?? 'public', ...place,
    recurrence: body.recurrence ? tx.json(body.recurrence) : null,
  });
  await q.setPlans(tx, studioId, id, planIds);
  const occurrences = Array.from({ length: count }, (_, i) => {
    const start = new Date(startsAt.getTime() + i * step);
    return {
      id: newId('occurrence'), studioId, classId: id, instructorId: body.instructorId, startsAt: start,
      endsAt: new Date(start.getTime() + body.durationMinutes * 60_000), durationMinutes: body.durationMinutes,
      ...place, capacity: body.capacity ?? null,
    };
  });
  await q.insertOccurrences(tx, occurrences);
  return readClass(tx, studioId, id);
}

/** PATCH: instructor, duration and capacity also apply to the occurrences that have not started. */
export async function updateClass(tx: Tx, studioId: string, id: string, body: UpdateClassBody): Promise<Class> {
  if (!(await q.lockClass(tx, studioId, id))) throw problems.notFound('class', id);
  if (body.durationMinutes !== undefined) {
    const last = await q.lastFutureStart(tx, studioId, id);
    if (last) requireStorable(last.getTime() + body.durationMinutes * 60_000, '/body/durationMinutes', 'the last occurrence\'s end');
  }
  if (body.instructorId !== undefined) await requireInstructor(tx, studioId, body.instructorId);
  const fields: Record<string, unknown> = {};
  for (const k of ['title', 'discipline', 'level', 'capacity', 'visibility', 'instructorId', 'durationMinutes'] as const) {
    if (body[k] !== undefined) fields[k] = body[k];
  }
  if (body.planIds !== undefined) await q.setPlans(tx, studioId, id, await requirePlans(tx, studioId, body.planIds));
  await q.updateClass(tx, studioId, id, fields);
  if (body.instructorId !== undefined || body.durationMinutes !== undefined || body.capacity !== undefined) {
    await q.updateFutureOccurrences(tx, studioId, id, { instructorId: body.instructorId, durationMinutes: body.durationMinutes, capacity: body.capacity });
  }
  return readClass(tx, studioId, id);
}

/** DELETE: the class and its future occurrences become cancelled (past ones stay as history). */
export async function cancelClass(tx: Tx, studioId: string, id: string): Promise<Class> {
  if (!(await q.lockClass(tx, studioId, id))) throw problems.notFound('class', id);
  await q.cancelClass(tx, studioId, id);
  return readClass(tx, studioId, id);
}
