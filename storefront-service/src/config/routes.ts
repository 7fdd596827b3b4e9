import { problems } from '@studio/shared';
import type { HandlersFor } from '@studio/shared/io';
import { cacheable } from '../kit/cacheable';
import type { StorefrontDeps } from '../kit/deps';
import { studioConfig } from './queries';

/** storefrontGetConfig. */
export const configHandlers = ({ sql }: StorefrontDeps) =>
  ({
    storefrontGetConfig: async ({ caller, request }) => {
      const config = await studioConfig(sql, caller.studioId);
      if (!config) throw problems.studioGone();
      return cacheable(request, config);
    },
  }) satisfies HandlersFor<'storefrontGetConfig'>;
