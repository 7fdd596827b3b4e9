import { Elysia } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { StorefrontInstructorList } from '@studio/shared/schemas/storefront';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { storefrontRoute } from '../kit/docs';
import { activeInstructors } from './queries';

const route = storefrontRoute('storefrontListInstructors', 'List instructors', StorefrontInstructorList, {}, 'The studio\'s active instructors, ordered by name.');

/** storefrontListInstructors. */
export const instructorRoutes = ({ sql }: StorefrontDeps) =>
  new Elysia({ name: 'storefront-instructors' })
    .use(withCaller)
    .get(route.path, async ({ caller, request }) => {
      const rows = await activeInstructors(sql, caller.studioId);
      return cacheable(request, { instructors: rows.map((r) => ({ id: r.id, name: r.name, bio: r.bio, photoUrl: r.photoUrl, disciplines: r.disciplines })) });
    }, { detail: route.detail });
