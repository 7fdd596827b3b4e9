import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getPlan, listPlansPage } from './queries';
import * as svc from './service';

type Ids =
  | 'managementListPlans'
  | 'managementCreatePlan'
  | 'managementGetPlan'
  | 'managementUpdatePlan'
  | 'managementArchivePlan';

/** Plans (docs/design/resources.md): config checked against the type; DELETE archives. */
export const planHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListPlans: ({ caller, query }) =>
      listPlansPage(deps.sql, caller.studioId, readPage(deps.config.CURSOR_SECRET, caller, 'plans', query)),
    managementCreatePlan: (c) => write(c, (tx) => svc.createPlan(tx, c.caller.studioId, c.body)),
    managementGetPlan: async ({ caller, params }) =>
      found(await getPlan(deps.sql, caller.studioId, params.planId), 'plan'),
    managementUpdatePlan: (c) => write(c, (tx) => svc.updatePlan(tx, c.caller.studioId, c.params.planId, c.body)),
    managementArchivePlan: (c) => write(c, (tx) => svc.archivePlan(tx, c.caller.studioId, c.params.planId)),
  } satisfies HandlersFor<Ids>;
};
