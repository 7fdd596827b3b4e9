import type { HandlersFor } from '@studio/shared/io';
import { cacheable } from '../kit/cacheable';
import type { StorefrontDeps } from '../kit/deps';
import { listClasses } from './service';

/** storefrontListClasses. */
export const classHandlers = ({ sql }: StorefrontDeps) =>
  ({
    storefrontListClasses: async ({ caller, query, request }) =>
      cacheable(request, await listClasses(sql, caller.studioId, query)),
  }) satisfies HandlersFor<'storefrontListClasses'>;
