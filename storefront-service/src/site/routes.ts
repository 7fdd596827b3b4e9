import { Elysia } from 'elysia';
import { iso, problem } from '@studio/shared';
import { withCaller } from '@studio/shared/service-kit';
import { StorefrontSite } from '@studio/shared/schemas/storefront';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { storefrontRoute } from '../kit/docs';
import { publishedSite } from './queries';

const route = storefrontRoute('storefrontGetSite', 'Get the public site', StorefrontSite, {
  404: 'site_not_published: the studio has no published public site',
}, 'The studio\'s published site content.');

/** storefrontGetSite. */
export const siteRoutes = ({ sql }: StorefrontDeps) =>
  new Elysia({ name: 'storefront-site' })
    .use(withCaller)
    .get(route.path, async ({ caller, request }) => {
      const s = await publishedSite(sql, caller.studioId);
      if (!s) throw problem('site_not_published', 'This studio has not published a public site.');
      return cacheable(request, {
        title: s.title, tagline: s.tagline, description: s.description, logoUrl: s.logoUrl, heroImageUrl: s.heroImageUrl,
        contactEmail: s.contactEmail, phone: s.phone, address: s.address, social: s.social, publishedAt: iso(s.publishedAt),
      });
    }, { detail: route.detail });
