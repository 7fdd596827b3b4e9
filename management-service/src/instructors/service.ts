import { problems } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import type { CreateInstructorBody, Instructor, UpdateInstructorBody } from '@studio/shared/schemas';
import { changedFields, event, unchanged, updated, type Written } from '../kit/events';
import * as q from './queries';

export async function createInstructor(
  tx: Tx,
  studioId: string,
  body: CreateInstructorBody,
): Promise<Written<Instructor, 'instructor.created'>> {
  const instructor = await q.insertInstructor(tx, studioId, body);
  return { record: instructor, events: [event('instructor.created', instructor)] };
}

/** Only the fields sent that differ are written; none: nothing changes and nothing is recorded. */
export async function updateInstructor(
  tx: Tx,
  studioId: string,
  id: string,
  body: UpdateInstructorBody,
): Promise<Written<Instructor, 'instructor.updated'>> {
  const before = await q.lockInstructor(tx, studioId, id);
  if (!before) throw problems.notFound('instructor', id);
  const patch = changedFields(before, body);
  if (!Object.keys(patch).length) return unchanged(before);
  const instructor = (await q.updateInstructor(tx, studioId, id, patch))!;
  return { record: instructor, events: updated('instructor.updated', before, instructor) };
}
