import { iso, newId } from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { Program } from '@studio/shared/schemas';
import { afterSql, type Page, type PageParams, pageOf, sortKeySql } from '../kit/pagination';

interface Row {
  id: string;
  name: string;
  description: string | null;
  pricing: 'free' | 'paid';
  priceCents: number | null;
  currency: string | null;
  classIds: string[];
  status: 'active' | 'archived';
  createdAt: Date;
  updatedAt: Date;
}
const COLUMNS = 'id, name, description, pricing, price_cents, currency, class_ids, status, created_at, updated_at';

const toProgram = (r: Row): Program => ({
  id: r.id,
  name: r.name,
  description: r.description,
  pricing: r.pricing,
  priceCents: r.priceCents,
  currency: r.currency,
  classIds: r.classIds,
  status: r.status,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

export type ProgramValues = Pick<
  Program,
  'name' | 'description' | 'pricing' | 'priceCents' | 'currency' | 'classIds' | 'status'
>;

/** One page of the studio's programs, archived ones included, keyset on (created_at, id) over `programs_studio`. */
export async function listProgramsPage(db: Db, studioId: string, p: PageParams): Promise<Page<Program>> {
  const rows = await db<(Row & { sortKey: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${sortKeySql(db, 'created_at')} as sort_key from programs
    where studio_id = ${studioId} ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
  return pageOf(p, rows, toProgram);
}

export async function getProgram(db: Db, studioId: string, id: string, forUpdate = false): Promise<Program | null> {
  const [row] = forUpdate
    ? await db<
        Row[]
      >`select ${db.unsafe(COLUMNS)} from programs where studio_id = ${studioId} and id = ${id} for update`
    : await db<Row[]>`select ${db.unsafe(COLUMNS)} from programs where studio_id = ${studioId} and id = ${id}`;
  return row ? toProgram(row) : null;
}

/** The ids among `ids` that are classes of the studio (classes are never deleted, only cancelled). */
export async function existingClassIds(db: Db, studioId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await db<{ id: string }[]>`select id from classes where studio_id = ${studioId} and id = any(${ids})`;
  return new Set(rows.map((r) => r.id));
}

export async function insertProgram(db: Db, studioId: string, v: ProgramValues): Promise<Program> {
  const [row] = await db<Row[]>`
    insert into programs ${db({ id: newId('program'), studioId, ...v })} returning ${db.unsafe(COLUMNS)}`;
  return toProgram(row!);
}

export async function updateProgram(db: Db, studioId: string, id: string, v: ProgramValues): Promise<Program> {
  const [row] = await db<Row[]>`
    update programs set ${db({ ...v, updatedAt: new Date() })}
    where studio_id = ${studioId} and id = ${id} returning ${db.unsafe(COLUMNS)}`;
  return toProgram(row!);
}
