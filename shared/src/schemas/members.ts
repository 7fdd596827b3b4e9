import { Type as t, type Static } from '@sinclair/typebox';
import { Nullable, Page, Timestamp } from './fields';

export const ROLES = ['admin', 'manager', 'instructor', 'front_desk', 'member'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (r: string): r is Role => (ROLES as readonly string[]).includes(r);

/** A role outside the list is 422 invalid_role (a business rule), not validation_failed. */
const RoleInput = t.String({ maxLength: 64, description: `One of ${ROLES.join(', ')}; else 422 invalid_role` });

export const InviteMemberBody = t.Object({
  email: t.String({ maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$', description: 'Stored lower-case; 409 member_exists if already a member' }),
  name: t.Optional(t.String({ minLength: 1, maxLength: 120 })),
  role: t.Optional(RoleInput),
}, { additionalProperties: false });
export type InviteMemberBody = Static<typeof InviteMemberBody>;

export const UpdateMemberBody = t.Object({
  name: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 120 }))),
  role: t.Optional(RoleInput),
}, { additionalProperties: false });
export type UpdateMemberBody = Static<typeof UpdateMemberBody>;

export const Member = t.Object({
  id: t.String({ description: 'mem_…' }),
  email: t.String(),
  name: Nullable(t.String()),
  role: t.Union(ROLES.map((r) => t.Literal(r))),
  status: t.Union([t.Literal('invited'), t.Literal('active'), t.Literal('cancelled')]),
  invitedAt: Nullable(Timestamp),
  cancelledAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Member = Static<typeof Member>;
export const MemberPage = Page(Member);
