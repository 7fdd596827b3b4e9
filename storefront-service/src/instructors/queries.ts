import type { Sql } from '@studio/shared/db';
import { MAX_STOREFRONT_LIST, type StorefrontInstructor } from '@studio/shared/schemas/storefront';

/** The studio's active instructors, by name; at most `MAX_STOREFRONT_LIST`, as the schema says (contract §18). */
export const activeInstructors = (sql: Sql, studioId: string) => sql<StorefrontInstructor[]>`
  select id, name, bio, photo_url, disciplines from instructors
  where studio_id = ${studioId} and active
  order by name, id
  limit ${MAX_STOREFRONT_LIST}`;
