import { Elysia } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { StorefrontPlanList } from '@studio/shared/schemas/storefront';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { storefrontRoute } from '../kit/docs';
import { publicPlans } from './queries';

const route = storefrontRoute('storefrontListPlans', 'List plans', StorefrontPlanList, {}, 'Active public plans (memberships, class packs, drop-ins) with their price config.');

/** storefrontListPlans. */
export const planRoutes = ({ sql }: StorefrontDeps) =>
  new Elysia({ name: 'storefront-plans' })
    .use(withCaller)
    .get(route.path, async ({ caller, request }) => {
      const rows = await publicPlans(sql, caller.studioId);
      return cacheable(request, { plans: rows.map((r) => ({ id: r.id, name: r.name, description: r.description, type: r.type, config: r.config })) });
    }, { detail: route.detail });
