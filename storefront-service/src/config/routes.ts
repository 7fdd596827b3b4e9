import { Elysia } from 'elysia';
import { problem } from '@studio/shared';
import { withCaller } from '@studio/shared/service-kit';
import { StorefrontConfig } from '@studio/shared/schemas/storefront';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { storefrontRoute } from '../kit/docs';
import { liveStudio } from './queries';

const route = storefrontRoute('storefrontGetConfig', 'Get storefront config', StorefrontConfig, {},
  'What a studio website needs to render: studio identity, time zone, currency, locale, enabled class modes and branding.');

/** storefrontGetConfig. */
export const configRoutes = ({ sql }: StorefrontDeps) =>
  new Elysia({ name: 'storefront-config' })
    .use(withCaller)
    .get(route.path, async ({ caller, request }) => {
      const s = await liveStudio(sql, caller.studioId);
      if (!s) throw problem('not_found', 'No such studio.');
      return cacheable(request, {
        studio: { id: s.id, name: s.name, slug: s.slug },
        timezone: s.timezone, currency: s.currency, locale: s.locale, enabledModes: s.enabledModes,
        branding: { primaryColor: s.primaryColor, logoUrl: s.logoUrl },
      });
    }, { detail: route.detail });
