import { AppError, iso, isoOrNull, newId, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/db';
import { isRole, ROLES, type InviteMemberBody, type Member, type UpdateMemberBody } from '@studio/shared/schemas/members';
import type { WriteResult } from '../kit/write';
import * as q from './queries';

export const memberJson = (r: q.MemberRow): Member => ({
  id: r.id,
  email: r.email,
  name: r.name,
  role: r.role as Member['role'],
  status: r.status as Member['status'],
  invitedAt: isoOrNull(r.invitedAt),
  cancelledAt: isoOrNull(r.cancelledAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

function requireRole(role: string) {
  if (!isRole(role)) throw new AppError('invalid_role', { detail: `Role ${quote(role)} is not one of ${ROLES.join(', ')}.` });
}

/** Invite: e-mail stored lower-case; the `members_email` unique index makes a duplicate 409 `member_exists`. */
export async function inviteMember(tx: Tx, studioId: string, body: InviteMemberBody): Promise<WriteResult> {
  const role = body.role ?? 'member';
  requireRole(role);
  const row = await q.insertMember(tx, { id: newId('member'), studioId, email: body.email.trim().toLowerCase(), name: body.name ?? null, role });
  return { status: 201, body: memberJson(row), location: `/v1/members/${row.id}` };
}

/** Fails with 409 `last_admin` when `memberId` is the only active admin (admins locked first). */
async function keepAnAdmin(tx: Tx, studioId: string, member: q.MemberRow) {
  if (member.role !== 'admin' || member.status !== 'active') return;
  const admins = await q.lockActiveAdmins(tx, studioId);
  if (admins.length <= 1 && admins.includes(member.id)) {
    throw new AppError('last_admin', { detail: 'The studio must keep at least one active admin.' });
  }
}

async function requireMember(tx: Tx, studioId: string, id: string) {
  // lock the admins before the member so every writer takes the locks in one order
  await q.lockActiveAdmins(tx, studioId);
  const member = await q.lockMember(tx, studioId, id);
  if (!member) throw problems.notFound('member', id);
  return member;
}

export async function updateMember(tx: Tx, studioId: string, id: string, body: UpdateMemberBody): Promise<WriteResult> {
  if (body.role !== undefined) requireRole(body.role);
  const member = await requireMember(tx, studioId, id);
  if (body.role !== undefined && body.role !== 'admin') await keepAnAdmin(tx, studioId, member);
  const fields: Record<string, unknown> = {};
  if (body.name !== undefined) fields.name = body.name;
  if (body.role !== undefined) fields.role = body.role;
  return { status: 200, body: memberJson(await q.updateMember(tx, studioId, id, fields)) };
}

export async function cancelMembership(tx: Tx, studioId: string, id: string): Promise<WriteResult> {
  const member = await requireMember(tx, studioId, id);
  await keepAnAdmin(tx, studioId, member);
  return { status: 200, body: memberJson(await q.cancelMember(tx, studioId, id)) };
}
