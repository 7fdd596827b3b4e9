import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { Class, ClassPage, CreateClassBody, UpdateClassBody } from '@studio/shared/schemas/classes';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { PageQuery, pageOf, readPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listClasses } from './queries';
import { cancelClass, classJson, createClass, updateClass } from './service';

const ClassParams = t.Object({ classId: t.String({ maxLength: 64 }) });

/** Classes: list (cursor), create (with recurrence), update, cancel. */
export const classRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-classes' })
    .use(withCaller)
    .get(pathOf('managementListClasses'), async ({ caller, query }) => {
      const p = readPage(deps.config.CURSOR_SECRET, caller, 'classes', query);
      return pageOf(p, await listClasses(deps.sql, caller.studioId, p), classJson);
    }, { query: PageQuery, ...mgRoute('managementListClasses', 'List classes', { 200: ClassPage }, {}, 'Ordered by createdAt, then id.') })
    .post(pathOf('managementCreateClass'), ({ caller, request, body }) =>
      runWrite(deps, caller, request, body, (tx) => createClass(tx, caller.studioId, body)), {
      body: CreateClassBody,
      ...mgRoute('managementCreateClass', 'Create a class', { 201: Class }, {
        409: ['instructor_double_booked'],
        422: ['unknown_instructor', 'unknown_plan', 'unknown_location', 'unknown_room', 'unsupported_channel', 'occurrence_in_past'],
      }, 'Creates the class and all its occurrences (`recurrence`) in one transaction: if any occurrence double-books the instructor, nothing is created.'),
    })
    .patch(pathOf('managementUpdateClass'), ({ caller, request, body, params }) =>
      runWrite(deps, caller, request, body, (tx) => updateClass(tx, caller.studioId, params.classId, body)), {
      body: UpdateClassBody,
      params: ClassParams,
      ...mgRoute('managementUpdateClass', 'Update a class', { 200: Class }, {
        404: ['not_found'], 409: ['instructor_double_booked'], 422: ['unknown_instructor', 'unknown_plan'],
      }, '`instructorId`, `durationMinutes` and `capacity` also apply to the occurrences that have not started.'),
    })
    .delete(pathOf('managementCancelClass'), ({ caller, request, params }) =>
      runWrite(deps, caller, request, undefined, (tx) => cancelClass(tx, caller.studioId, params.classId)), {
      params: ClassParams,
      ...mgRoute('managementCancelClass', 'Cancel a class', { 200: Class }, { 404: ['not_found'] }, 'The class and its future occurrences become `cancelled`; the answer is the class in its final state.'),
    });
