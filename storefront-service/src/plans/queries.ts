import type { Sql } from '@studio/shared/io';
import { MAX_STOREFRONT_LIST, type StorefrontPlan } from '@studio/shared/schemas';

const toPlan = (r: StorefrontPlan): StorefrontPlan => ({
  id: r.id,
  name: r.name,
  description: r.description,
  type: r.type,
  config: r.config,
});

/** Active public plans, in the order the studio created them; at most `MAX_STOREFRONT_LIST`, as the schema says (docs/design/hostile-callers.md). */
export async function publicPlans(sql: Sql, studioId: string): Promise<StorefrontPlan[]> {
  const rows = await sql<StorefrontPlan[]>`
    select id, name, description, type, config from plans
    where studio_id = ${studioId} and status = 'active' and visibility = 'public'
    order by created_at, id
    limit ${MAX_STOREFRONT_LIST}`;
  return rows.map(toPlan);
}
