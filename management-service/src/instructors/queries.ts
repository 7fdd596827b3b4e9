import type postgres from 'postgres';
import { iso, newId } from '@studio/shared';
import type { Instructor, CreateInstructorBody, UpdateInstructorBody } from '@studio/shared/schemas/instructors';

/** The plain client or a transaction: every query takes the studio first. */
type Db = postgres.ISql<{}>;

interface Row { id: string; name: string; email: string | null; bio: string | null; photoUrl: string | null; disciplines: string[]; active: boolean; createdAt: Date; updatedAt: Date }

const toInstructor = (r: Row): Instructor => ({
  id: r.id, name: r.name, email: r.email, bio: r.bio, photoUrl: r.photoUrl, disciplines: r.disciplines, active: r.active,
  createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt),
});

export async function listInstructors(db: Db, studioId: string): Promise<Instructor[]> {
  const rows = await db<Row[]>`
    select id, name, email, bio, photo_url, disciplines, active, created_at, updated_at
    from instructors where studio_id = ${studioId} order by created_at, id`;
  return rows.map(toInstructor);
}

export async function insertInstructor(db: Db, studioId: string, b: CreateInstructorBody): Promise<Instructor> {
  const [row] = await db<Row[]>`
    insert into instructors ${db({
      id: newId('instructor'), studioId, name: b.name, email: b.email ?? null, bio: b.bio ?? null,
      photoUrl: b.photoUrl ?? null, disciplines: b.disciplines ?? [], active: b.active ?? true,
    })}
    returning id, name, email, bio, photo_url, disciplines, active, created_at, updated_at`;
  return toInstructor(row!);
}

/** Applies only the fields present in the patch; null when there is no such instructor in the studio. */
export async function updateInstructor(db: Db, studioId: string, id: string, patch: UpdateInstructorBody): Promise<Instructor | null> {
  const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const [row] = await db<Row[]>`
    update instructors set ${db({ ...set, updatedAt: new Date() })}
    where studio_id = ${studioId} and id = ${id}
    returning id, name, email, bio, photo_url, disciplines, active, created_at, updated_at`;
  return row ? toInstructor(row) : null;
}
