import type { Sql, Tx } from '@studio/shared/db';
import { afterSql, sortKeySql, type PageParams } from '../kit/pagination';

type Db = Sql | Tx;

export interface MemberRow {
  id: string;
  email: string;
  name: string | null;
  role: string;
  status: string;
  invitedAt: Date | null;
  cancelledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  sortKey: string;
}

const columns = (db: Db) => db`id, email, name, role, status, invited_at, cancelled_at, created_at, updated_at, ${sortKeySql(db, 'created_at')} as sort_key`;

export async function listMembers(db: Db, studioId: string, p: PageParams): Promise<MemberRow[]> {
  return db<MemberRow[]>`
    select ${columns(db)} from members
    where studio_id = ${studioId} ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
}

/**
 * A membership of the studio, cancelled ones included (their status says so); undefined for
 * another studio's id. Map with `memberJson`, as `getClass` / `getOccurrence` with theirs.
 */
export async function getMember(db: Db, studioId: string, id: string): Promise<MemberRow | undefined> {
  const [m] = await db<MemberRow[]>`select ${columns(db)} from members where studio_id = ${studioId} and id = ${id}`;
  return m;
}

export async function insertMember(tx: Tx, row: { id: string; studioId: string; email: string; name: string | null; role: string }): Promise<MemberRow> {
  const [m] = await tx<MemberRow[]>`
    insert into members ${tx({ ...row, status: 'invited', invitedAt: new Date() })} returning ${columns(tx)}`;
  return m!;
}

export async function lockMember(tx: Tx, studioId: string, id: string): Promise<MemberRow | undefined> {
  const [m] = await tx<MemberRow[]>`select ${columns(tx)} from members where studio_id = ${studioId} and id = ${id} for update`;
  return m;
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

export async function updateMember(tx: Tx, studioId: string, id: string, fields: Record<string, unknown>): Promise<MemberRow> {
  const [m] = await tx<MemberRow[]>`
    update members set ${tx({ ...fields, updatedAt: new Date() })}
    where studio_id = ${studioId} and id = ${id} returning ${columns(tx)}`;
  return m!;
}

export async function cancelMember(tx: Tx, studioId: string, id: string): Promise<MemberRow> {
  const [m] = await tx<MemberRow[]>`
    update members set status = 'cancelled', cancelled_at = coalesce(cancelled_at, now()), updated_at = now()
    where studio_id = ${studioId} and id = ${id} returning ${columns(tx)}`;
  return m!;
}
