import type { HandlersFor } from '@studio/shared/io';
import { cacheable } from '../kit/cacheable';
import type { StorefrontDeps } from '../kit/deps';
import { activeInstructors } from './queries';

/** storefrontListInstructors. */
export const instructorHandlers = ({ sql }: StorefrontDeps) =>
  ({
    storefrontListInstructors: async ({ caller, request }) =>
      cacheable(request, { instructors: await activeInstructors(sql, caller.studioId) }),
  }) satisfies HandlersFor<'storefrontListInstructors'>;
