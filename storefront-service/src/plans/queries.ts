import type { Sql } from '@studio/shared/db';
import { MAX_STOREFRONT_LIST, type StorefrontPlan } from '@studio/shared/schemas/storefront';

/** Active public plans, in the order the studio created them; at most `MAX_STOREFRONT_LIST`, as the schema says (contract §18). */
export const publicPlans = (sql: Sql, studioId: string) => sql<StorefrontPlan[]>`
  select id, name, description, type, config from plans
  where studio_id = ${studioId} and status = 'active' and visibility = 'public'
  order by created_at, id
  limit ${MAX_STOREFRONT_LIST}`;
