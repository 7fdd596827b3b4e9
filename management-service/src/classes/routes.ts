import type { HandlersFor } from '@studio/shared/register';
import type { ManagementDeps } from '../app';
import { found, writerOf } from '../kit/handlers';
import { pageOf, readPage } from '../kit/pagination';
import { getClass, listClasses } from './queries';
import { cancelClass, classJson, createClass, updateClass } from './service';

type Ids = 'managementListClasses' | 'managementCreateClass' | 'managementGetClass' | 'managementUpdateClass' | 'managementCancelClass';

/** Classes: list (cursor), create (with recurrence), read, update, cancel. */
export const classHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListClasses: async ({ caller, query }) => {
      const p = readPage(deps.config.CURSOR_SECRET, caller, 'classes', query);
      return pageOf(p, await listClasses(deps.sql, caller.studioId, p), classJson);
    },
    managementCreateClass: (c) => write(c, (tx) => createClass(tx, c.caller.studioId, c.body)),
    managementGetClass: async ({ caller, params }) => classJson(found(await getClass(deps.sql, caller.studioId, params.classId), 'class')),
    managementUpdateClass: (c) => write(c, (tx) => updateClass(tx, c.caller.studioId, c.params.classId, c.body)),
    managementCancelClass: (c) => write(c, (tx) => cancelClass(tx, c.caller.studioId, c.params.classId)),
  } satisfies HandlersFor<Ids>;
};
