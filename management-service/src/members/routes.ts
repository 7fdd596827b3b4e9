import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { InviteMemberBody, Member, MemberPage, UpdateMemberBody } from '@studio/shared/schemas/members';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { PageQuery, pageOf, readPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listMembers } from './queries';
import { cancelMembership, inviteMember, memberJson, updateMember } from './service';

const MemberParams = t.Object({ membershipId: t.String({ maxLength: 64 }) });

/** Memberships: list (cursor), invite, update (name, role), cancel. */
export const memberRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-members' })
    .use(withCaller)
    .get(pathOf('managementListMembers'), async ({ caller, query }) => {
      const p = readPage(deps.config.CURSOR_SECRET, caller, 'members', query);
      return pageOf(p, await listMembers(deps.sql, caller.studioId, p), memberJson);
    }, { query: PageQuery, ...mgRoute('managementListMembers', 'List members', { 200: MemberPage }, {}, 'Ordered by createdAt, then id.') })
    .post(pathOf('managementInviteMember'), ({ caller, request, body }) =>
      runWrite(deps, caller, request, body, (tx) => inviteMember(tx, caller.studioId, body)), {
      body: InviteMemberBody,
      ...mgRoute('managementInviteMember', 'Invite a member', { 201: Member }, { 409: ['member_exists'], 422: ['invalid_role'] },
        'The e-mail is stored lower-case; an e-mail that is already a (not cancelled) member of the studio, in any case, is 409 `member_exists`.'),
    })
    .patch(pathOf('managementUpdateMember'), ({ caller, request, body, params }) =>
      runWrite(deps, caller, request, body, (tx) => updateMember(tx, caller.studioId, params.membershipId, body)), {
      body: UpdateMemberBody,
      params: MemberParams,
      ...mgRoute('managementUpdateMember', 'Update a member', { 200: Member }, { 404: ['not_found'], 409: ['last_admin'], 422: ['invalid_role'] },
        'Demoting the studio\'s last active admin is 409 `last_admin`.'),
    })
    .post(pathOf('managementCancelMembership'), ({ caller, request, params }) =>
      runWrite(deps, caller, request, undefined, (tx) => cancelMembership(tx, caller.studioId, params.membershipId)), {
      params: MemberParams,
      ...mgRoute('managementCancelMembership', 'Cancel a membership', { 200: Member }, { 404: ['not_found'], 409: ['last_admin'] },
        'Status becomes `cancelled`; cancelling the last active admin is 409 `last_admin`. No body.'),
    });
