import { AppError, newId, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import {
  EMAIL_MAX,
  emailForm,
  type InviteMemberBody,
  isRole,
  type Member,
  ROLES,
  type UpdateMemberBody,
} from '@studio/shared/schemas';
import { changedFields, event, unchanged, updated, type Written } from '../kit/events';
import * as q from './queries';

function requireRole(role: string) {
  if (!isRole(role))
    throw new AppError('invalid_role', { detail: `Role ${quote(role)} is not one of ${ROLES.join(', ')}.` });
}

/** Invite: e-mail stored in NFC and lower-case; the `members_email` unique index makes a duplicate 409 `member_exists`. */
export async function inviteMember(
  tx: Tx,
  studioId: string,
  body: InviteMemberBody,
): Promise<Written<Member, 'member.invited'>> {
  const role = body.role ?? 'member';
  requireRole(role);
  // one form per address; what is stored must still be an address the schema answers with
  const email = emailForm(body.email);
  if (email.length > EMAIL_MAX)
    throw problems.invalidFields([{ path: '/body/email', message: `must be at most ${EMAIL_MAX} characters` }]);
  const member = await q.insertMember(tx, {
    id: newId('member'),
    studioId,
    email,
    name: body.name ?? null,
    role,
  });
  return { record: member, events: [event('member.invited', member)] };
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

/** Only what differs is written: the same name and role change nothing and record nothing. */
export async function updateMember(
  tx: Tx,
  studioId: string,
  id: string,
  body: UpdateMemberBody,
): Promise<Written<Member, 'member.updated'>> {
  // which member first (404), then whether it may change (409), then the values (422), as every PATCH judges them
  const member = await requireMember(tx, studioId, id);
  const fields = changedFields(member, { name: body.name, role: body.role as Member['role'] | undefined });
  if (!Object.keys(fields).length) return unchanged(member);
  // cancelling is final: a PATCH that would change a cancelled membership is refused (one that changes nothing answers it)
  if (member.status === 'cancelled')
    throw new AppError('membership_cancelled', {
      detail: 'This membership was cancelled, and a cancelled membership is final: invite the address again instead.',
    });
  if (body.role !== undefined) requireRole(body.role);
  if (body.role !== undefined && body.role !== 'admin') await keepAnAdmin(tx, studioId, member);
  const after = await q.updateMember(tx, studioId, id, fields);
  return { record: after, events: updated('member.updated', member, after) };
}

/** Cancelling a cancelled membership changes nothing and records nothing. */
export async function cancelMembership(
  tx: Tx,
  studioId: string,
  id: string,
): Promise<Written<Member, 'membership.cancelled'>> {
  const member = await requireMember(tx, studioId, id);
  if (member.status === 'cancelled') return unchanged(member);
  await keepAnAdmin(tx, studioId, member);
  const cancelled = await q.cancelMember(tx, studioId, id);
  return { record: cancelled, events: [event('membership.cancelled', cancelled)] };
}
