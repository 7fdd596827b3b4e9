import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { CreateInstructorBody, Instructor, InstructorPage, UpdateInstructorBody } from '@studio/shared/schemas/instructors';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { listPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listInstructors } from './queries';
import { createInstructor, updateInstructor } from './service';

const params = t.Object({ instructorId: t.String({ maxLength: 64 }) });

/** Instructors (contract §8): list, create, update. Inactive instructors stay listed here. */
export const instructorRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-instructors' })
    .use(withCaller)
    .get(pathOf('managementListInstructors'), async ({ caller }) => listPage(await listInstructors(deps.sql, caller.studioId)),
      mgRoute('managementListInstructors', 'List instructors', { 200: InstructorPage }, {}, 'Every instructor of the studio, active or not, ordered by createdAt, then id.'))
    .post(pathOf('managementCreateInstructor'), ({ caller, request, body }) =>
      runWrite(deps, caller, request, body, async (tx) => {
        const instructor = await createInstructor(tx, caller.studioId, body);
        return { status: 201, body: instructor, location: `/v1/instructors/${instructor.id}` };
      }), {
      body: CreateInstructorBody,
      ...mgRoute('managementCreateInstructor', 'Create an instructor', { 201: Instructor }),
    })
    .patch(pathOf('managementUpdateInstructor'), ({ caller, request, body, params: { instructorId } }) =>
      runWrite(deps, caller, request, body, async (tx) => ({ status: 200, body: await updateInstructor(tx, caller.studioId, instructorId, body) })), {
      params,
      body: UpdateInstructorBody,
      ...mgRoute('managementUpdateInstructor', 'Update an instructor', { 200: Instructor }, { 404: ['not_found'] }, 'Only the fields sent change.'),
    });
