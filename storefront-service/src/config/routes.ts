import { problems } from '@studio/shared';
import { describeKey, type HandlersFor } from '@studio/shared/io';
import { cacheable } from '../kit/cacheable';
import type { StorefrontDeps } from '../kit/deps';
import { studioConfig } from './queries';

/** storefrontGetConfig, and storefrontGetKey (the calling key's own description, never cached). */
export const configHandlers = ({ sql }: StorefrontDeps) =>
  ({
    storefrontGetConfig: async ({ caller, request }) => {
      const config = await studioConfig(sql, caller.studioId);
      if (!config) throw problems.studioGone();
      return cacheable(request, config);
    },
    // with its ETag like every Storefront read (Vary: Authorization keeps it the key's own in any shared cache)
    storefrontGetKey: async ({ caller, request }) => {
      const key = await describeKey(sql, caller);
      if (!key) throw problems.studioGone();
      return cacheable(request, key);
    },
  }) satisfies HandlersFor<'storefrontGetConfig' | 'storefrontGetKey'>;
