import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getProgram, listProgramsPage } from './queries';
import * as svc from './service';

type Ids = 'managementListPrograms' | 'managementCreateProgram' | 'managementGetProgram' | 'managementUpdateProgram';

/** Programs (docs/design/resources.md): the price rule holds on create and on the merged result of every PATCH. */
export const programHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListPrograms: ({ caller, query }) =>
      listProgramsPage(deps.sql, caller.studioId, readPage(deps.config.CURSOR_SECRET, caller, 'programs', query)),
    managementCreateProgram: (c) => write(c, (tx) => svc.createProgram(tx, c.caller.studioId, c.body)),
    managementGetProgram: async ({ caller, params }) =>
      found(await getProgram(deps.sql, caller.studioId, params.programId), 'program'),
    managementUpdateProgram: (c) =>
      write(c, (tx) => svc.updateProgram(tx, c.caller.studioId, c.params.programId, c.body)),
  } satisfies HandlersFor<Ids>;
};
