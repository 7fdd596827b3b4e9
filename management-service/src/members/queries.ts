import { iso, isoOrNull } from '@studio/shared';
import type { Db, Tx } from '@studio/shared/io';
import type { Member } from '@studio/shared/schemas';
import { afterSql, type Page, type PageParams, pageOf, sortKeySql } from '../kit/pagination';

interface Row {
  id: string;
  email: string;
  name: string | null;
  role: Member['role'];
  status: Member['status'];
  invitedAt: Date | null;
  cancelledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
const COLUMNS = 'id, email, name, role, status, invited_at, cancelled_at, created_at, updated_at';

const toMember = (r: Row): Member => ({
  id: r.id,
  email: r.email,
  name: r.name,
  role: r.role,
  status: r.status,
  invitedAt: isoOrNull(r.invitedAt),
  cancelledAt: isoOrNull(r.cancelledAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** One page of the studio's memberships, cancelled ones included, keyset on (created_at, id). */
export async function listMembersPage(db: Db, studioId: string, p: PageParams): Promise<Page<Member>> {
  const rows = await db<(Row & { sortKey: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${sortKeySql(db, 'created_at')} as sort_key from members
    where studio_id = ${studioId} ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
  return pageOf(p, rows, toMember);
}

/** A membership of the studio, cancelled ones included (their status says so); null for another studio's id. */
export async function getMember(db: Db, studioId: string, id: string): Promise<Member | null> {
  const [row] = await db<Row[]>`select ${db.unsafe(COLUMNS)} from members where studio_id = ${studioId} and id = ${id}`;
  return row ? toMember(row) : null;
}

export async function insertMember(
  tx: Tx,
  v: { id: string; studioId: string; email: string; name: string | null; role: string },
): Promise<Member> {
  const [row] = await tx<Row[]>`
    insert into members ${tx({ ...v, status: 'invited', invitedAt: new Date() })} returning ${tx.unsafe(COLUMNS)}`;
  return toMember(row!);
}

export async function lockMember(tx: Tx, studioId: string, id: string): Promise<Member | null> {
  const [row] = await tx<
    Row[]
  >`select ${tx.unsafe(COLUMNS)} from members where studio_id = ${studioId} and id = ${id} for update`;
  return row ? toMember(row) : null;
}

/**
 * Locks the studio's active admins and returns their ids. Two concurrent demotions
 * serialise here, and the second sees the first's change, so one admin always remains.
 */
export async function lockActiveAdmins(tx: Tx, studioId: string): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    select id from members where studio_id = ${studioId} and role = 'admin' and status = 'active' order by id for update`;
  return rows.map((r) => r.id);
}

export async function updateMember(
  tx: Tx,
  studioId: string,
  id: string,
  fields: Record<string, unknown>,
): Promise<Member> {
  const [row] = await tx<Row[]>`
    update members set ${tx({ ...fields, updatedAt: new Date() })}
    where studio_id = ${studioId} and id = ${id} returning ${tx.unsafe(COLUMNS)}`;
  return toMember(row!);
}

export async function cancelMember(tx: Tx, studioId: string, id: string): Promise<Member> {
  const [row] = await tx<Row[]>`
    update members set status = 'cancelled', cancelled_at = coalesce(cancelled_at, now()), updated_at = now()
    where studio_id = ${studioId} and id = ${id} returning ${tx.unsafe(COLUMNS)}`;
  return toMember(row!);
}
