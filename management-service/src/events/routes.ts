import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { getEvent, listEvents } from './service';

type Ids = 'managementListEvents' | 'managementGetEvent';

/** The change feed (docs/design/events.md): any read scope, filtered by what the key may read. Recorded by the write runner (kit/events.ts). */
export const eventHandlers = (deps: ManagementDeps) =>
  ({
    managementListEvents: ({ caller, query }) => listEvents(deps, caller, query),
    managementGetEvent: ({ caller, params }) => getEvent(deps.sql, caller, params.eventId),
  }) satisfies HandlersFor<Ids>;
