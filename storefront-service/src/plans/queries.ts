import type { Sql } from '@studio/shared/db';
import type { StorefrontPlan } from '@studio/shared/schemas/storefront';

/** Active public plans, in the order the studio created them. */
export const publicPlans = (sql: Sql, studioId: string) => sql<StorefrontPlan[]>`
  select id, name, description, type, config from plans
  where studio_id = ${studioId} and status = 'active' and visibility = 'public'
  order by created_at, id`;
