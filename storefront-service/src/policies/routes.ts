import { problems } from '@studio/shared';
import type { HandlersFor } from '@studio/shared/io';
import { cacheable } from '../kit/cacheable';
import type { StorefrontDeps } from '../kit/deps';
import { studioPolicies } from './queries';

/** storefrontGetPolicies. */
export const policyHandlers = ({ sql }: StorefrontDeps) =>
  ({
    storefrontGetPolicies: async ({ caller, request }) => {
      const policies = await studioPolicies(sql, caller.studioId);
      if (!policies) throw problems.studioGone();
      return cacheable(request, policies);
    },
  }) satisfies HandlersFor<'storefrontGetPolicies'>;
