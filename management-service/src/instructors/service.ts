import { problems } from '@studio/shared';
import type { Tx } from '@studio/shared/db';
import type { CreateInstructorBody, UpdateInstructorBody } from '@studio/shared/schemas/instructors';
import * as q from './queries';

export const createInstructor = (tx: Tx, studioId: string, body: CreateInstructorBody) => q.insertInstructor(tx, studioId, body);

export async function updateInstructor(tx: Tx, studioId: string, id: string, body: UpdateInstructorBody) {
  const instructor = await q.updateInstructor(tx, studioId, id, body);
  if (!instructor) throw problems.notFound('instructor', id);
  return instructor;
}
