import { AppError, newId, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/db';
import { isRole, ROLES, type InviteMemberBody, type Member, type UpdateMemberBody } from '@studio/shared/schemas/members';
import * as q from './queries';

function requireRole(role: string) {
  if (!isRole(role)) throw new AppError('invalid_role', { detail: `Role ${quote(role)} is not one of ${ROLES.join(', ')}.` });
}

/** Invite: e-mail stored lower-case; the `members_email` unique index makes a duplicate 409 `member_exists`. */
export async function inviteMember(tx: Tx, studioId: string, body: InviteMemberBody): Promise<Member> {
  const role = body.role ?? 'member';
  requireRole(role);
  return q.insertMember(tx, { id: newId('member'), studioId, email: body.email.trim().toLowerCase(), name: body.name ?? null, role });
}

/** Fails with 409 `last_admin` when `memberId` is the only active admin (admins locked first). */
async function keepAnAdmin(tx: Tx, studioId: string, member: Member) {
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

export async function updateMember(tx: Tx, studioId: string, id: string, body: UpdateMemberBody): Promise<Member> {
  if (body.role !== undefined) requireRole(body.role);
  const member = await requireMember(tx, studioId, id);
  if (body.role !== undefined && body.role !== 'admin') await keepAnAdmin(tx, studioId, member);
  const fields: Record<string, unknown> = {};
  if (body.name !== undefined) fields.name = body.name;
  if (body.role !== undefined) fields.role = body.role;
  return q.updateMember(tx, studioId, id, fields);
}

export async function cancelMembership(tx: Tx, studioId: string, id: string): Promise<Member> {
  const member = await requireMember(tx, studioId, id);
  await keepAnAdmin(tx, studioId, member);
  return q.cancelMember(tx, studioId, id);
}
