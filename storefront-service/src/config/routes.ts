import { problems } from '@studio/shared';
import type { HandlersFor } from '@studio/shared/register';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { liveStudio } from './queries';

/** storefrontGetConfig. */
export const configHandlers = ({ sql }: StorefrontDeps) => ({
  storefrontGetConfig: async ({ caller, request }) => {
    const s = await liveStudio(sql, caller.studioId);
    if (!s) throw problems.notFound('studio');
    return cacheable(request, {
      studio: { id: s.id, name: s.name, slug: s.slug },
      timezone: s.timezone, currency: s.currency, locale: s.locale, enabledModes: s.enabledModes,
      branding: { primaryColor: s.primaryColor, logoUrl: s.logoUrl },
    });
  },
}) satisfies HandlersFor<'storefrontGetConfig'>;
