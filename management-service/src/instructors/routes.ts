import type { HandlersFor } from '@studio/shared/register';
import type { ManagementDeps } from '../app';
import { created, found, ok, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getInstructor, listInstructorsPage } from './queries';
import { createInstructor, updateInstructor } from './service';

type Ids = 'managementListInstructors' | 'managementCreateInstructor' | 'managementGetInstructor' | 'managementUpdateInstructor';

/** Instructors (contract §8): list (cursor), create, read, update. Inactive instructors stay listed here. */
export const instructorHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListInstructors: ({ caller, query }) =>
      listInstructorsPage(deps.sql, caller.studioId, readPage(deps.config.CURSOR_SECRET, caller, 'instructors', query)),
    managementCreateInstructor: (c) => write(c, async (tx) => {
      const instructor = await createInstructor(tx, c.caller.studioId, c.body);
      return created(instructor, `/v1/instructors/${instructor.id}`);
    }),
    managementGetInstructor: async ({ caller, params }) => found(await getInstructor(deps.sql, caller.studioId, params.instructorId), 'instructor'),
    managementUpdateInstructor: (c) => write(c, async (tx) => ok(await updateInstructor(tx, c.caller.studioId, c.params.instructorId, c.body))),
  } satisfies HandlersFor<Ids>;
};
