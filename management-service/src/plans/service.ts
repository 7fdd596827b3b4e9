import { problems } from '@studio/shared';
import type { Tx } from '@studio/shared/db';
import { isCurrency, schemaErrors } from '@studio/shared/schemas/fields';
import { PLAN_CONFIGS, type CreatePlanBody, type PlanConfig, type PlanType, type UpdatePlanBody } from '@studio/shared/schemas/plans';
import * as q from './queries';

const notFound = (id: string) => problems.notFound('plan', id);

/** A config valid for its type, with defaults filled in; else 422 `invalid_plan_config` listing every fault. */
export function checkPlanConfig(type: PlanType, config: unknown): PlanConfig {
  const errors = schemaErrors(PLAN_CONFIGS[type], config, '/body/config');
  const currency = (config as { currency?: unknown } | null)?.currency;
  if (!errors.length && typeof currency === 'string' && !isCurrency(currency)) {
    errors.push({ path: '/body/config/currency', message: 'is not an ISO 4217 currency' });
  }
  if (errors.length) {
    throw problems.invalidFields(errors, 'invalid_plan_config', `The config is not valid for a ${type} plan`);
  }
  if (type === 'membership') {
    const c = config as { intervalCount?: number; classesPerInterval?: number | null };
    return { ...(config as PlanConfig), intervalCount: c.intervalCount ?? 1, classesPerInterval: c.classesPerInterval ?? null } as PlanConfig;
  }
  return config as PlanConfig;
}

export function createPlan(tx: Tx, studioId: string, body: CreatePlanBody) {
  const config = checkPlanConfig(body.type, body.config);
  return q.insertPlan(tx, studioId, { name: body.name, type: body.type, config, description: body.description ?? null, visibility: body.visibility ?? 'public' });
}

/** A new config is checked against the stored type, which never changes. */
export async function updatePlan(tx: Tx, studioId: string, id: string, body: UpdatePlanBody) {
  const plan = await q.getPlanForUpdate(tx, studioId, id);
  if (!plan) throw notFound(id);
  const config = body.config === undefined ? undefined : checkPlanConfig(plan.type, body.config);
  return q.updatePlan(tx, studioId, id, { ...body, config });
}

export async function archivePlan(tx: Tx, studioId: string, id: string) {
  const plan = await q.archivePlan(tx, studioId, id);
  if (!plan) throw notFound(id);
  return plan;
}
