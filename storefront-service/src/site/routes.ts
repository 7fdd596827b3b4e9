import { problems } from '@studio/shared';
import type { HandlersFor } from '@studio/shared/io';
import { cacheable } from '../kit/cacheable';
import type { StorefrontDeps } from '../kit/deps';
import { publishedSite } from './queries';

/** storefrontGetSite. */
export const siteHandlers = ({ sql }: StorefrontDeps) =>
  ({
    storefrontGetSite: async ({ caller, request }) => {
      const site = await publishedSite(sql, caller.studioId);
      if (!site) throw problems.siteNotPublished();
      return cacheable(request, site);
    },
  }) satisfies HandlersFor<'storefrontGetSite'>;
