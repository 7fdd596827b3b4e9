import { type Static, Type as t } from '@sinclair/typebox';
import { Email, IdOut, Nullable, Page, Text, Timestamp } from './fields';

export const ROLES = ['admin', 'manager', 'instructor', 'front_desk', 'member'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (r: string): r is Role => (ROLES as readonly string[]).includes(r);

const ROLE_TEXT = `One of ${ROLES.join(', ')}; else 422 invalid_role`;
/**
 * A role outside the list is 422 invalid_role (a business rule), not validation_failed, so the
 * run-time schema is a string; the documents (`x-doc`) give the enum, so a generated client types it.
 */
const RoleInput = Text(64, {
  description: ROLE_TEXT,
  'x-doc': { type: 'string', enum: [...ROLES], description: ROLE_TEXT },
});

export const InviteMemberBody = t.Object(
  {
    email: Email('Stored lower-case; 409 member_exists if already a member'),
    name: t.Optional(Text(120, { minLength: 1 })),
    role: t.Optional(RoleInput),
  },
  { additionalProperties: false },
);
export type InviteMemberBody = Static<typeof InviteMemberBody>;

export const UpdateMemberBody = t.Object(
  {
    name: t.Optional(Nullable(Text(120, { minLength: 1 }))),
    role: t.Optional(RoleInput),
  },
  { additionalProperties: false },
);
export type UpdateMemberBody = Static<typeof UpdateMemberBody>;

export const Member = t.Object({
  id: IdOut('mem_…'),
  email: t.String({ maxLength: 254 }),
  name: Nullable(t.String({ maxLength: 120 })),
  role: t.Union(ROLES.map((r) => t.Literal(r))),
  status: t.Union([t.Literal('invited'), t.Literal('active'), t.Literal('cancelled')]),
  invitedAt: Nullable(Timestamp),
  cancelledAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Member = Static<typeof Member>;
export const MemberPage = Page(Member);
