import type { HandlersFor } from '@studio/shared/register';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { activeInstructors } from './queries';

/** storefrontListInstructors. */
export const instructorHandlers = ({ sql }: StorefrontDeps) => ({
  storefrontListInstructors: async ({ caller, request }) => {
    const rows = await activeInstructors(sql, caller.studioId);
    return cacheable(request, { instructors: rows.map((r) => ({ id: r.id, name: r.name, bio: r.bio, photoUrl: r.photoUrl, disciplines: r.disciplines })) });
  },
}) satisfies HandlersFor<'storefrontListInstructors'>;
