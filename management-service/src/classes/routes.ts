import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getClass, listClassesPage } from './queries';
import * as svc from './service';

type Ids =
  | 'managementListClasses'
  | 'managementCreateClass'
  | 'managementGetClass'
  | 'managementUpdateClass'
  | 'managementCancelClass';

/** Classes: list (cursor), create (with recurrence), read, update, cancel. */
export const classHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListClasses: ({ caller, query }) =>
      listClassesPage(deps.sql, caller.studioId, readPage(deps.config.CURSOR_SECRET, caller, 'classes', query)),
    managementCreateClass: (c) => write(c, (tx) => svc.createClass(tx, c.caller.studioId, c.body)),
    managementGetClass: async ({ caller, params }) =>
      found(await getClass(deps.sql, caller.studioId, params.classId), 'class'),
    managementUpdateClass: (c) => write(c, (tx) => svc.updateClass(tx, c.caller.studioId, c.params.classId, c.body)),
    managementCancelClass: (c) => write(c, (tx) => svc.cancelClass(tx, c.caller.studioId, c.params.classId)),
  } satisfies HandlersFor<Ids>;
};
