import { Elysia, t } from 'elysia';
import { AppError, parseInstant } from '@studio/shared';
import { withCaller } from '@studio/shared/service-kit';
import { Occurrence, OccurrencePage, RescheduleBody, ScheduleQuery } from '@studio/shared/schemas/schedule';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { pageOf, readPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listOccurrences } from './queries';
import { occurrenceJson, rescheduleOccurrence } from './service';

/** A filter instant in canonical UTC ms, so the cursor compares filters by value. */
function instantFilter(text: string | undefined, name: string): string | undefined {
  if (text === undefined) return undefined;
  const at = parseInstant(text);
  if (!at) throw new AppError('validation_failed', { detail: `${name} is not a valid date-time.`, errors: [{ path: `/query/${name}`, message: 'not a valid RFC 3339 date-time' }] });
  return at.toISOString();
}

/** The schedule: occurrences of every class, and moving one. */
export const scheduleRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-schedule' })
    .use(withCaller)
    .get(pathOf('managementListSchedule'), async ({ caller, query }) => {
      const p = readPage(deps.config.CURSOR_SECRET, caller, 'schedule', query, {
        from: instantFilter(query.from, 'from'), to: instantFilter(query.to, 'to'),
        classId: query.classId, instructorId: query.instructorId,
      });
      return pageOf(p, await listOccurrences(deps.sql, caller.studioId, p), occurrenceJson);
    }, {
      query: ScheduleQuery,
      ...mgRoute('managementListSchedule', 'List the schedule', { 200: OccurrencePage }, { 422: ['validation_failed'] },
        'Occurrences ordered by startsAt, then id. Filters: `from` (inclusive), `to` (exclusive), `classId`, `instructorId`; a cursor keeps the filters it was made with.'),
    })
    .patch(pathOf('managementRescheduleOccurrence'), ({ caller, request, body, params }) =>
      runWrite(deps, caller, request, body, (tx) => rescheduleOccurrence(tx, caller.studioId, params.occurrenceId, body)), {
      body: RescheduleBody,
      params: t.Object({ occurrenceId: t.String({ maxLength: 64 }) }),
      ...mgRoute('managementRescheduleOccurrence', 'Reschedule an occurrence', { 200: Occurrence }, {
        404: ['not_found'], 409: ['instructor_double_booked', 'occurrence_cancelled'], 422: ['occurrence_in_past'],
      }),
    });
