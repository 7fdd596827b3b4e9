import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import type { StorefrontDeps } from '../app';

const Instructor = t.Object({
  id: t.String(),
  name: t.String(),
  bio: t.Union([t.String(), t.Null()]),
  photoUrl: t.Union([t.String(), t.Null()]),
  disciplines: t.Array(t.String()),
});

/** storefrontListInstructors: the studio's active instructors. */
export const instructorRoutes = ({ sql }: StorefrontDeps) =>
  new Elysia({ name: 'storefront-instructors' })
    .use(withCaller)
    .get('/v1/instructors', async ({ caller }) => {
      const rows = await sql<{ id: string; name: string; bio: string | null; photoUrl: string | null; disciplines: string[] }[]>`
        select id, name, bio, photo_url, disciplines from instructors
        where studio_id = ${caller.studioId} and active order by name, id`;
      return { instructors: rows.map((r) => ({ ...r })) };
    }, {
      response: { 200: t.Object({ instructors: t.Array(Instructor) }) },
      detail: { operationId: 'storefrontListInstructors', summary: 'List active instructors' },
    });
