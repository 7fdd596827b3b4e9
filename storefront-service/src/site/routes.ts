import type { TObject } from '@sinclair/typebox';
import { iso, problems } from '@studio/shared';
import { Address } from '@studio/shared/schemas/locations';
import { SiteSocial } from '@studio/shared/schemas/storefront';
import type { HandlersFor } from '@studio/shared/register';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { publishedSite } from './queries';

/** The documented fields of a stored JSON object: a site published before `address` and `social` were closed may hold others. */
const closed = (schema: TObject, v: Record<string, unknown> | null) =>
  v && Object.fromEntries(Object.keys(schema.properties).filter((k) => typeof v[k] === 'string' || v[k] === null).map((k) => [k, v[k]]));

/** storefrontGetSite. */
export const siteHandlers = ({ sql }: StorefrontDeps) => ({
  storefrontGetSite: async ({ caller, request }) => {
    const s = await publishedSite(sql, caller.studioId);
    if (!s) throw problems.siteNotPublished();
    return cacheable(request, {
      title: s.title, tagline: s.tagline, description: s.description, logoUrl: s.logoUrl, heroImageUrl: s.heroImageUrl,
      contactEmail: s.contactEmail, phone: s.phone, address: closed(Address, s.address), social: closed(SiteSocial, s.social), publishedAt: iso(s.publishedAt),
    });
  },
}) satisfies HandlersFor<'storefrontGetSite'>;
