import { iso, newId } from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { CreateInstructorBody, Instructor, UpdateInstructorBody } from '@studio/shared/schemas';
import { afterSql, type Page, type PageParams, pageOf, sortKeySql } from '../kit/pagination';

interface Row {
  id: string;
  name: string;
  email: string | null;
  bio: string | null;
  photoUrl: string | null;
  disciplines: string[];
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}
const COLUMNS = 'id, name, email, bio, photo_url, disciplines, active, created_at, updated_at';

const toInstructor = (r: Row): Instructor => ({
  id: r.id,
  name: r.name,
  email: r.email,
  bio: r.bio,
  photoUrl: r.photoUrl,
  disciplines: r.disciplines,
  active: r.active,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** One page of the studio's instructors, active or not, keyset on (created_at, id) over `instructors_studio`. */
export async function listInstructorsPage(db: Db, studioId: string, p: PageParams): Promise<Page<Instructor>> {
  const rows = await db<(Row & { sortKey: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${sortKeySql(db, 'created_at')} as sort_key from instructors
    where studio_id = ${studioId} ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
  return pageOf(p, rows, toInstructor);
}

/** An instructor of the studio, active or not; null for another studio's id. */
export async function getInstructor(db: Db, studioId: string, id: string): Promise<Instructor | null> {
  const [row] = await db<
    Row[]
  >`select ${db.unsafe(COLUMNS)} from instructors where studio_id = ${studioId} and id = ${id}`;
  return row ? toInstructor(row) : null;
}

/** An instructor of the studio, locked for the rest of the transaction; null for another studio's id. */
export async function lockInstructor(db: Db, studioId: string, id: string): Promise<Instructor | null> {
  const [row] = await db<
    Row[]
  >`select ${db.unsafe(COLUMNS)} from instructors where studio_id = ${studioId} and id = ${id} for update`;
  return row ? toInstructor(row) : null;
}

export async function insertInstructor(db: Db, studioId: string, b: CreateInstructorBody): Promise<Instructor> {
  const [row] = await db<Row[]>`
    insert into instructors ${db({
      id: newId('instructor'),
      studioId,
      name: b.name,
      email: b.email ?? null,
      bio: b.bio ?? null,
      photoUrl: b.photoUrl ?? null,
      disciplines: b.disciplines ?? [],
      active: b.active ?? true,
    })}
    returning ${db.unsafe(COLUMNS)}`;
  return toInstructor(row!);
}

/** Applies only the fields present in the patch; null when there is no such instructor in the studio. */
export async function updateInstructor(
  db: Db,
  studioId: string,
  id: string,
  patch: UpdateInstructorBody,
): Promise<Instructor | null> {
  const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const [row] = await db<Row[]>`
    update instructors set ${db({ ...set, updatedAt: new Date() })}
    where studio_id = ${studioId} and id = ${id}
    returning ${db.unsafe(COLUMNS)}`;
  return row ? toInstructor(row) : null;
}
