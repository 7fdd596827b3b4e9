import type { HandlersFor } from '@studio/shared/register';
import type { ManagementDeps } from '../app';
import { found, writerOf } from '../kit/handlers';
import { pageOf, readPage } from '../kit/pagination';
import { getMember, listMembers } from './queries';
import { cancelMembership, inviteMember, memberJson, updateMember } from './service';

type Ids = 'managementListMembers' | 'managementInviteMember' | 'managementGetMember' | 'managementUpdateMember' | 'managementCancelMembership';

/** Memberships: list (cursor), invite, read, update (name, role), cancel. */
export const memberHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListMembers: async ({ caller, query }) => {
      const p = readPage(deps.config.CURSOR_SECRET, caller, 'members', query);
      return pageOf(p, await listMembers(deps.sql, caller.studioId, p), memberJson);
    },
    managementInviteMember: (c) => write(c, (tx) => inviteMember(tx, c.caller.studioId, c.body)),
    managementGetMember: async ({ caller, params }) => memberJson(found(await getMember(deps.sql, caller.studioId, params.membershipId), 'member')),
    managementUpdateMember: (c) => write(c, (tx) => updateMember(tx, c.caller.studioId, c.params.membershipId, c.body)),
    managementCancelMembership: (c) => write(c, (tx) => cancelMembership(tx, c.caller.studioId, c.params.membershipId)),
  } satisfies HandlersFor<Ids>;
};
