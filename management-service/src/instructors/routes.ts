import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getInstructor, listInstructorsPage } from './queries';
import * as svc from './service';

type Ids =
  | 'managementListInstructors'
  | 'managementCreateInstructor'
  | 'managementGetInstructor'
  | 'managementUpdateInstructor';

/** Instructors (docs/design/resources.md): list (cursor), create, read, update. Inactive instructors stay listed here. */
export const instructorHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListInstructors: ({ caller, query }) =>
      listInstructorsPage(deps.sql, caller.studioId, readPage(deps.config.CURSOR_SECRET, caller, 'instructors', query)),
    managementCreateInstructor: (c) => write(c, (tx) => svc.createInstructor(tx, c.caller.studioId, c.body)),
    managementGetInstructor: async ({ caller, params }) =>
      found(await getInstructor(deps.sql, caller.studioId, params.instructorId), 'instructor'),
    managementUpdateInstructor: (c) =>
      write(c, (tx) => svc.updateInstructor(tx, c.caller.studioId, c.params.instructorId, c.body)),
  } satisfies HandlersFor<Ids>;
};
