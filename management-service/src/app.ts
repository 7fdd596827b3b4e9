import { registerOperations, serviceKit } from '@studio/shared/io';
import { Elysia } from 'elysia';
import { classHandlers } from './classes/routes';
import { contentHandlers } from './content/routes';
import { couponHandlers } from './coupons/routes';
import { eventHandlers } from './events/routes';
import { instructorHandlers } from './instructors/routes';
import { keyHandlers } from './keys/routes';
import type { ManagementDeps } from './kit/deps';
import { writeGuard } from './kit/guard';
import { refusedWrite, writeCounters } from './kit/write';
import { locationHandlers } from './locations/routes';
import { memberHandlers } from './members/routes';
import { planHandlers } from './plans/routes';
import { programHandlers } from './programs/routes';
import { sandboxHandlers } from './sandboxes/routes';
import { scheduleHandlers } from './schedule/routes';

/** The Management service: scoped back-office reads and writes, one handler per registry row. Never listens itself. */
export function createManagementService(deps: ManagementDeps) {
  if (deps.metrics) writeCounters(deps.metrics); // named on /metrics from the start, not from the first write
  return new Elysia({ name: 'management-service', normalize: false })
    .use(
      serviceKit({
        name: 'management',
        surface: 'management',
        config: deps.config,
        sql: deps.sql,
        redis: deps.redis,
        refused: refusedWrite(deps),
      }),
    )
    .use(writeGuard)
    .use(
      registerOperations('management', {
        ...classHandlers(deps),
        ...scheduleHandlers(deps),
        ...memberHandlers(deps),
        ...instructorHandlers(deps),
        ...locationHandlers(deps),
        ...planHandlers(deps),
        ...couponHandlers(deps),
        ...programHandlers(deps),
        ...contentHandlers(deps),
        ...eventHandlers(deps),
        ...sandboxHandlers(deps),
        ...keyHandlers(deps),
      }),
    );
}
