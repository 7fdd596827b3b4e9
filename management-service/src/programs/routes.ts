import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { CreateProgramBody, Program, ProgramPage, UpdateProgramBody } from '@studio/shared/schemas/programs';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { listPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listPrograms } from './queries';
import * as svc from './service';

const params = t.Object({ programId: t.String({ maxLength: 64 }) });
const PRICE = 'A `paid` program needs a positive `priceCents` and a `currency`; a `free` one (the default) has neither, else 422 `invalid_price`. `classIds` must be classes of the studio.';

/** Programs (contract §8): the price rule holds on create and on the merged result of every PATCH. */
export const programRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-programs' })
    .use(withCaller)
    .get(pathOf('managementListPrograms'), async ({ caller }) => listPage(await listPrograms(deps.sql, caller.studioId)),
      mgRoute('managementListPrograms', 'List programs', { 200: ProgramPage }, {}, 'Ordered by createdAt, then id.'))
    .get(pathOf('managementGetProgram'), async ({ caller, params: { programId } }) => svc.getProgram(deps.sql, caller.studioId, programId), {
      params,
      ...mgRoute('managementGetProgram', 'Get a program', { 200: Program }, { 404: ['not_found'] }),
    })
    .post(pathOf('managementCreateProgram'), ({ caller, request, body }) =>
      runWrite(deps, caller, request, body, async (tx) => {
        const program = await svc.createProgram(tx, caller.studioId, body);
        return { status: 201, body: program, location: `/v1/programs/${program.id}` };
      }), {
      body: CreateProgramBody,
      ...mgRoute('managementCreateProgram', 'Create a program', { 201: Program }, { 422: ['invalid_price'] }, PRICE),
    })
    .patch(pathOf('managementUpdateProgram'), ({ caller, request, body, params: { programId } }) =>
      runWrite(deps, caller, request, body, async (tx) => ({ status: 200, body: await svc.updateProgram(tx, caller.studioId, programId, body) })), {
      params,
      body: UpdateProgramBody,
      ...mgRoute('managementUpdateProgram', 'Update a program', { 200: Program }, { 404: ['not_found'], 422: ['invalid_price'] },
        `The stored program overlaid with the fields sent must satisfy the price rule (switching to free: send \`priceCents\` and \`currency\` as null). ${PRICE}`),
    });
