import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { writerOf } from '../kit/handlers';
import { resetSandboxIn } from './service';

/**
 * The sandbox reset, a test key's own (docs/design/test-mode.md): its sandbox is the caller's studio. It runs as
 * every write does (one Idempotency-Key, one answer), records no event (it deletes them all), and the gateway drops
 * the sandbox's cached Storefront answers once it succeeds (`changesStorefront`).
 */
export const sandboxHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  const idempotency = { redis: deps.redis, prefix: deps.config.REDIS_PREFIX };
  return {
    managementResetSandbox: (c) =>
      write(c, async (tx) => ({ record: await resetSandboxIn(tx, c.caller.studioId, idempotency), events: [] })),
  } satisfies HandlersFor<'managementResetSandbox'>;
};
