import { Elysia } from 'elysia';
import { setProblemTypeBase, type Config } from '@studio/shared';
import { serviceKit } from '@studio/shared/service-kit';
import { pingSql, type Sql } from '@studio/shared/db';
import { pingRedis, type Redis } from '@studio/shared/redis';
import { instructorRoutes } from './instructors/routes';
import { locationRoutes } from './locations/routes';
import { planRoutes } from './plans/routes';
import { couponRoutes } from './coupons/routes';
import { programRoutes } from './programs/routes';
import { contentRoutes } from './content/routes';
import { writeGuard } from './kit/guard';
import { managementOpenApi } from './kit/openapi';
import { classRoutes } from './classes/routes';
import { scheduleRoutes } from './schedule/routes';
import { memberRoutes } from './members/routes';

export interface ManagementDeps {
  config: Config;
  sql: Sql;
  redis: Redis | null;
}

/** The Management service: scoped back-office reads and writes. Never listens itself. */
export function createManagementService(deps: ManagementDeps) {
  setProblemTypeBase(`${deps.config.MANAGEMENT_PUBLIC_URL}/docs/problems#`);
  return new Elysia({ name: 'management-service', normalize: false })
    .use(serviceKit({
      name: 'management',
      gatewaySecret: deps.config.GATEWAY_SECRET,
      ready: async () => ({ postgres: await pingSql(deps.sql), redis: deps.redis ? await pingRedis(deps.redis) : false }),
    }))
    .use(writeGuard)
    .use(managementOpenApi(deps.config.MANAGEMENT_PUBLIC_URL))
    .use(classRoutes(deps))
    .use(scheduleRoutes(deps))
    .use(memberRoutes(deps))
    .use(instructorRoutes(deps))
    .use(locationRoutes(deps))
    .use(planRoutes(deps))
    .use(couponRoutes(deps))
    .use(programRoutes(deps))
    .use(contentRoutes(deps));
}
