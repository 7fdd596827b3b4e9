import { iso, problems } from '@studio/shared';
import type { HandlersFor } from '@studio/shared/register';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { studioPolicies } from './queries';

/** storefrontGetPolicies. */
export const policyHandlers = ({ sql }: StorefrontDeps) => ({
  storefrontGetPolicies: async ({ caller, request }) => {
    const p = await studioPolicies(sql, caller.studioId);
    if (!p) throw problems.notFound('studio');
    return cacheable(request, {
      cancellation: p.cancellation, lateCancelMinutes: p.lateCancelMinutes ?? 0, noShow: p.noShow,
      terms: p.terms, privacy: p.privacy, waiver: p.waiver, updatedAt: iso(p.updatedAt),
    });
  },
}) satisfies HandlersFor<'storefrontGetPolicies'>;
