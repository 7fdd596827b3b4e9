import type { Sql } from '@studio/shared/io';
import { MAX_STOREFRONT_LIST, type StorefrontInstructor } from '@studio/shared/schemas';

const toInstructor = (r: StorefrontInstructor): StorefrontInstructor => ({
  id: r.id,
  name: r.name,
  bio: r.bio,
  photoUrl: r.photoUrl,
  disciplines: r.disciplines,
});

/** The studio's active instructors, by name; at most `MAX_STOREFRONT_LIST`, as the schema says (docs/design/hostile-callers.md). */
export async function activeInstructors(sql: Sql, studioId: string): Promise<StorefrontInstructor[]> {
  const rows = await sql<StorefrontInstructor[]>`
    select id, name, bio, photo_url, disciplines from instructors
    where studio_id = ${studioId} and active
    order by name, id
    limit ${MAX_STOREFRONT_LIST}`;
  return rows.map(toInstructor);
}
