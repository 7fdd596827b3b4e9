import { iso, problems } from '@studio/shared';
import type { HandlersFor } from '@studio/shared/register';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { publishedSite } from './queries';

/** storefrontGetSite. */
export const siteHandlers = ({ sql }: StorefrontDeps) => ({
  storefrontGetSite: async ({ caller, request }) => {
    const s = await publishedSite(sql, caller.studioId);
    if (!s) throw problems.siteNotPublished();
    return cacheable(request, {
      title: s.title, tagline: s.tagline, description: s.description, logoUrl: s.logoUrl, heroImageUrl: s.heroImageUrl,
      contactEmail: s.contactEmail, phone: s.phone, address: s.address, social: s.social, publishedAt: iso(s.publishedAt),
    });
  },
}) satisfies HandlersFor<'storefrontGetSite'>;
