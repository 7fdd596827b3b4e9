import { problems } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import {
  type CreatePlanBody,
  isCurrency,
  PLAN_CONFIGS,
  type Plan,
  type PlanConfig,
  type PlanType,
  schemaErrors,
  type UpdatePlanBody,
} from '@studio/shared/schemas';
import { changedFields, event, unchanged, updated, type Written } from '../kit/events';
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
    return {
      ...(config as PlanConfig),
      intervalCount: c.intervalCount ?? 1,
      classesPerInterval: c.classesPerInterval ?? null,
    } as PlanConfig;
  }
  return config as PlanConfig;
}

export async function createPlan(
  tx: Tx,
  studioId: string,
  body: CreatePlanBody,
): Promise<Written<Plan, 'plan.created'>> {
  const config = checkPlanConfig(body.type, body.config);
  const plan = await q.insertPlan(tx, studioId, {
    name: body.name,
    type: body.type,
    config,
    description: body.description ?? null,
    visibility: body.visibility ?? 'public',
  });
  return { record: plan, events: [event('plan.created', plan)] };
}

/** A new config is checked against the stored type, which never changes. Only what differs is written. */
export async function updatePlan(
  tx: Tx,
  studioId: string,
  id: string,
  body: UpdatePlanBody,
): Promise<Written<Plan, 'plan.updated'>> {
  const plan = await q.getPlanForUpdate(tx, studioId, id);
  if (!plan) throw notFound(id);
  const config = body.config === undefined ? undefined : checkPlanConfig(plan.type, body.config);
  const patch = changedFields(plan, {
    name: body.name,
    description: body.description,
    visibility: body.visibility,
    config,
  });
  if (!Object.keys(patch).length) return unchanged(plan);
  const after = await q.updatePlan(tx, studioId, id, patch);
  return { record: after, events: updated('plan.updated', plan, after) };
}

/** Archiving an archived plan changes nothing and records nothing. */
export async function archivePlan(tx: Tx, studioId: string, id: string): Promise<Written<Plan, 'plan.archived'>> {
  const before = await q.getPlanForUpdate(tx, studioId, id);
  if (!before) throw notFound(id);
  if (before.status === 'archived') return unchanged(before);
  const plan = (await q.archivePlan(tx, studioId, id))!;
  return { record: plan, events: [event('plan.archived', plan)] };
}
