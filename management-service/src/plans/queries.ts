import { iso, isoOrNull, newId } from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { Plan, PlanConfig, PlanType } from '@studio/shared/schemas';
import { afterSql, type Page, type PageParams, pageOf, sortKeySql } from '../kit/pagination';

interface Row {
  id: string;
  name: string;
  type: PlanType;
  config: PlanConfig;
  description: string | null;
  visibility: 'public' | 'private';
  status: 'active' | 'archived';
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
const COLUMNS = 'id, name, type, config, description, visibility, status, archived_at, created_at, updated_at';

const toPlan = (r: Row): Plan => ({
  id: r.id,
  name: r.name,
  type: r.type,
  config: r.config,
  description: r.description,
  visibility: r.visibility,
  status: r.status,
  archivedAt: isoOrNull(r.archivedAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** One page of the studio's plans, archived ones included, keyset on (created_at, id) over `plans_studio`. */
export async function listPlansPage(db: Db, studioId: string, p: PageParams): Promise<Page<Plan>> {
  const rows = await db<(Row & { sortKey: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${sortKeySql(db, 'created_at')} as sort_key from plans
    where studio_id = ${studioId} ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
  return pageOf(p, rows, toPlan);
}

/** A plan of the studio, archived or not (its status says which); null for another studio's id. */
export async function getPlan(db: Db, studioId: string, id: string): Promise<Plan | null> {
  const [row] = await db<Row[]>`select ${db.unsafe(COLUMNS)} from plans where studio_id = ${studioId} and id = ${id}`;
  return row ? toPlan(row) : null;
}

/** Locked for the rest of the transaction, so a config check and its update see the same row. */
export async function getPlanForUpdate(db: Db, studioId: string, id: string): Promise<Plan | null> {
  const [row] = await db<
    Row[]
  >`select ${db.unsafe(COLUMNS)} from plans where studio_id = ${studioId} and id = ${id} for update`;
  return row ? toPlan(row) : null;
}

export async function insertPlan(
  db: Db,
  studioId: string,
  v: { name: string; type: PlanType; config: PlanConfig; description: string | null; visibility: 'public' | 'private' },
): Promise<Plan> {
  const [row] = await db<Row[]>`
    insert into plans ${db({ id: newId('plan'), studioId, ...v, config: db.json(v.config) })}
    returning ${db.unsafe(COLUMNS)}`;
  return toPlan(row!);
}

export async function updatePlan(
  db: Db,
  studioId: string,
  id: string,
  patch: { name?: string; config?: PlanConfig; description?: string | null; visibility?: 'public' | 'private' },
): Promise<Plan> {
  const set: Record<string, unknown> = { updatedAt: new Date() };
  for (const [k, v] of Object.entries(patch))
    if (v !== undefined) set[k] = k === 'config' ? db.json(v as PlanConfig) : v;
  const [row] = await db<Row[]>`
    update plans set ${db(set)} where studio_id = ${studioId} and id = ${id} returning ${db.unsafe(COLUMNS)}`;
  return toPlan(row!);
}

/** Archiving an archived plan changes nothing (its archivedAt stays the first one). */
export async function archivePlan(db: Db, studioId: string, id: string): Promise<Plan | null> {
  const [row] = await db<Row[]>`
    update plans set status = 'archived', archived_at = coalesce(archived_at, now()),
      updated_at = case when status = 'archived' then updated_at else now() end
    where studio_id = ${studioId} and id = ${id} returning ${db.unsafe(COLUMNS)}`;
  return row ? toPlan(row) : null;
}
