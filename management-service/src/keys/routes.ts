import { problems } from '@studio/shared';
import { describeKey, type HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';

/** managementGetKey: the calling key's own description (shared/src/io/key-info.ts), whatever its scopes. */
export const keyHandlers = (deps: ManagementDeps) =>
  ({
    managementGetKey: async ({ caller }) => {
      const key = await describeKey(deps.sql, caller);
      if (!key) throw problems.studioGone();
      return key;
    },
  }) satisfies HandlersFor<'managementGetKey'>;
