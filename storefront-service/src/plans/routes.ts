import type { HandlersFor } from '@studio/shared/register';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { publicPlans } from './queries';

/** storefrontListPlans. */
export const planHandlers = ({ sql }: StorefrontDeps) => ({
  storefrontListPlans: async ({ caller, request }) => {
    const rows = await publicPlans(sql, caller.studioId);
    return cacheable(request, { plans: rows.map((r) => ({ id: r.id, name: r.name, description: r.description, type: r.type, config: r.config })) });
  },
}) satisfies HandlersFor<'storefrontListPlans'>;
