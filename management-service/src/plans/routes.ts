import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { CreatePlanBody, Plan, PlanPage, UpdatePlanBody } from '@studio/shared/schemas/plans';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { listPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listPlans } from './queries';
import * as svc from './service';

const params = t.Object({ planId: t.String({ maxLength: 64 }) });
const CONFIGS = 'Config by type: `membership` {priceCents ≥ 0, currency, interval week|month|year, intervalCount 1..12 (default 1), classesPerInterval ≥ 1 or null (default, unlimited)}; `class_pack` {priceCents, currency, classCount 1..1000, validityDays 1..3650}; `drop_in` {priceCents, currency}. A missing, extra or out-of-range field is 422 `invalid_plan_config` with `errors`.';

/** Plans (contract §8): config checked against the type; DELETE archives. */
export const planRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-plans' })
    .use(withCaller)
    .get(pathOf('managementListPlans'), async ({ caller }) => listPage(await listPlans(deps.sql, caller.studioId)),
      mgRoute('managementListPlans', 'List plans', { 200: PlanPage }, {}, 'Active and archived plans, ordered by createdAt, then id.'))
    .post(pathOf('managementCreatePlan'), ({ caller, request, body }) =>
      runWrite(deps, caller, request, body, async (tx) => {
        const plan = await svc.createPlan(tx, caller.studioId, body);
        return { status: 201, body: plan, location: `/v1/plans/${plan.id}` };
      }), {
      body: CreatePlanBody,
      ...mgRoute('managementCreatePlan', 'Create a plan', { 201: Plan }, { 422: ['invalid_plan_config'] }, CONFIGS),
    })
    .patch(pathOf('managementUpdatePlan'), ({ caller, request, body, params: { planId } }) =>
      runWrite(deps, caller, request, body, async (tx) => ({ status: 200, body: await svc.updatePlan(tx, caller.studioId, planId, body) })), {
      params,
      body: UpdatePlanBody,
      ...mgRoute('managementUpdatePlan', 'Update a plan', { 200: Plan }, { 404: ['not_found'], 422: ['invalid_plan_config'] },
        `\`type\` cannot change; a new \`config\` is checked against the stored type. ${CONFIGS}`),
    })
    .delete(pathOf('managementArchivePlan'), ({ caller, request, params: { planId } }) =>
      runWrite(deps, caller, request, undefined, async (tx) => ({ status: 200, body: await svc.archivePlan(tx, caller.studioId, planId) })), {
      params,
      ...mgRoute('managementArchivePlan', 'Archive a plan', { 200: Plan }, { 404: ['not_found'] }, 'The plan becomes `archived` (it stays listed); the answer is the plan in its final state.'),
    });
