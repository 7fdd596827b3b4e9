import { Elysia } from 'elysia';
import { iso, problem } from '@studio/shared';
import { withCaller } from '@studio/shared/service-kit';
import { StorefrontPolicies } from '@studio/shared/schemas/storefront';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { storefrontRoute } from '../kit/docs';
import { studioPolicies } from './queries';

const route = storefrontRoute('storefrontGetPolicies', 'Get policies', StorefrontPolicies, {},
  'Cancellation, no-show, terms, privacy and waiver texts. A new studio gets null texts and `lateCancelMinutes: 0`.');

/** storefrontGetPolicies. */
export const policyRoutes = ({ sql }: StorefrontDeps) =>
  new Elysia({ name: 'storefront-policies' })
    .use(withCaller)
    .get(route.path, async ({ caller, request }) => {
      const p = await studioPolicies(sql, caller.studioId);
      if (!p) throw problem('not_found', 'No such studio.');
      return cacheable(request, {
        cancellation: p.cancellation, lateCancelMinutes: p.lateCancelMinutes ?? 0, noShow: p.noShow,
        terms: p.terms, privacy: p.privacy, waiver: p.waiver, updatedAt: iso(p.updatedAt),
      });
    }, { detail: route.detail });
