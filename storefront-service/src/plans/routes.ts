import type { HandlersFor } from '@studio/shared/io';
import { cacheable } from '../kit/cacheable';
import type { StorefrontDeps } from '../kit/deps';
import { publicPlans } from './queries';

/** storefrontListPlans. */
export const planHandlers = ({ sql }: StorefrontDeps) =>
  ({
    storefrontListPlans: async ({ caller, request }) =>
      cacheable(request, { plans: await publicPlans(sql, caller.studioId) }),
  }) satisfies HandlersFor<'storefrontListPlans'>;
