import { clampInstant, parseInstant } from '@studio/shared';
import type { HandlersFor } from '@studio/shared/register';
import type { ManagementDeps } from '../app';
import { found, writerOf } from '../kit/handlers';
import { pageOf, readPage } from '../kit/pagination';
import { getOccurrence, listOccurrences } from './queries';
import { occurrenceJson, rescheduleOccurrence } from './service';

type Ids = 'managementListSchedule' | 'managementGetOccurrence' | 'managementRescheduleOccurrence';

/**
 * A filter instant in canonical UTC ms, so a cursor compares its filters by value (the schema has checked it),
 * moved into 1970..9999 (contract §18): `from=0000-…` means "from the start", as it always did, not a 500.
 */
const canonical = (text: string | undefined) => (text === undefined ? undefined : clampInstant(parseInstant(text)!).toISOString());

/** The schedule: occurrences of every class, reading one, and moving one. */
export const scheduleHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListSchedule: async ({ caller, query }) => {
      const p = readPage(deps.config.CURSOR_SECRET, caller, 'schedule', query, {
        from: canonical(query.from), to: canonical(query.to), classId: query.classId, instructorId: query.instructorId,
      });
      return pageOf(p, await listOccurrences(deps.sql, caller.studioId, p), occurrenceJson);
    },
    managementGetOccurrence: async ({ caller, params }) =>
      occurrenceJson(found(await getOccurrence(deps.sql, caller.studioId, params.occurrenceId), 'occurrence')),
    managementRescheduleOccurrence: (c) => write(c, (tx) => rescheduleOccurrence(tx, c.caller.studioId, c.params.occurrenceId, c.body)),
  } satisfies HandlersFor<Ids>;
};
