import type { Sql } from '@studio/shared/db';
import type { StorefrontInstructor } from '@studio/shared/schemas/storefront';

/** The studio's active instructors, by name. */
export const activeInstructors = (sql: Sql, studioId: string) => sql<StorefrontInstructor[]>`
  select id, name, bio, photo_url, disciplines from instructors
  where studio_id = ${studioId} and active
  order by name, id`;
