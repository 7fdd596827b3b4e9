import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { filterInstant } from '../kit/instants';
import { readPage } from '../kit/pagination';
import { getOccurrence, listSchedulePage } from './queries';
import * as svc from './service';

type Ids = 'managementListSchedule' | 'managementGetOccurrence' | 'managementRescheduleOccurrence';

/** The schedule: occurrences of every class, reading one, and moving one. */
export const scheduleHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListSchedule: ({ caller, query }) => {
      const p = readPage(deps.config.CURSOR_SECRET, caller, 'schedule', query, {
        from: filterInstant(query.from),
        to: filterInstant(query.to),
        classId: query.classId,
        instructorId: query.instructorId,
      });
      return listSchedulePage(deps.sql, caller.studioId, p);
    },
    managementGetOccurrence: async ({ caller, params }) =>
      found(await getOccurrence(deps.sql, caller.studioId, params.occurrenceId), 'occurrence'),
    managementRescheduleOccurrence: (c) =>
      write(c, (tx) => svc.rescheduleOccurrence(tx, c.caller.studioId, c.params.occurrenceId, c.body)),
  } satisfies HandlersFor<Ids>;
};
