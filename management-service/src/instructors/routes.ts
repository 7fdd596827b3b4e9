import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { iso } from '@studio/shared';
import type { ManagementDeps } from '../app';

const Instructor = t.Object({
  id: t.String(),
  name: t.String(),
  email: t.Union([t.String(), t.Null()]),
  bio: t.Union([t.String(), t.Null()]),
  photoUrl: t.Union([t.String(), t.Null()]),
  disciplines: t.Array(t.String()),
  active: t.Boolean(),
  createdAt: t.String(),
  updatedAt: t.String(),
});

/** GET /v1/instructors (managementListInstructors). */
export const instructorRoutes = ({ sql }: ManagementDeps) =>
  new Elysia({ name: 'management-instructors' })
    .use(withCaller)
    .get('/v1/instructors', async ({ caller }) => {
      const rows = await sql<{ id: string; name: string; email: string | null; bio: string | null; photoUrl: string | null; disciplines: string[]; active: boolean; createdAt: Date; updatedAt: Date }[]>`
        select id, name, email, bio, photo_url, disciplines, active, created_at, updated_at
        from instructors where studio_id = ${caller.studioId} order by created_at, id limit 100`;
      return { data: rows.map((r) => ({ ...r, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) })), next_cursor: null };
    }, {
      response: { 200: t.Object({ data: t.Array(Instructor), next_cursor: t.Union([t.String(), t.Null()]) }) },
      detail: { operationId: 'managementListInstructors', summary: 'List instructors' },
    });
