import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getMember, listMembersPage } from './queries';
import * as svc from './service';

type Ids =
  | 'managementListMembers'
  | 'managementInviteMember'
  | 'managementGetMember'
  | 'managementUpdateMember'
  | 'managementCancelMembership';

/** Memberships: list (cursor), invite, read, update (name, role), cancel. */
export const memberHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListMembers: ({ caller, query }) =>
      listMembersPage(deps.sql, caller.studioId, readPage(deps.config.CURSOR_SECRET, caller, 'members', query)),
    managementInviteMember: (c) => write(c, (tx) => svc.inviteMember(tx, c.caller.studioId, c.body)),
    managementGetMember: async ({ caller, params }) =>
      found(await getMember(deps.sql, caller.studioId, params.membershipId), 'member'),
    managementUpdateMember: (c) =>
      write(c, (tx) => svc.updateMember(tx, c.caller.studioId, c.params.membershipId, c.body)),
    managementCancelMembership: (c) =>
      write(c, (tx) => svc.cancelMembership(tx, c.caller.studioId, c.params.membershipId)),
  } satisfies HandlersFor<Ids>;
};
