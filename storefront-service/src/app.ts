import { Elysia } from 'elysia';
import { setProblemTypeBase, type Config } from '@studio/shared';
import { serviceKit } from '@studio/shared/service-kit';
import { pingSql, type Sql } from '@studio/shared/db';
import { pingRedis, type Redis } from '@studio/shared/redis';
import { storefrontOpenApi } from './kit/openapi';
import { configRoutes } from './config/routes';
import { siteRoutes } from './site/routes';
import { classRoutes } from './classes/routes';
import { instructorRoutes } from './instructors/routes';
import { planRoutes } from './plans/routes';
import { policyRoutes } from './policies/routes';

export interface StorefrontDeps {
  config: Config;
  sql: Sql;
  redis: Redis | null;
}

/** The Storefront service: public, read-only data of the caller's studio. Never listens itself. */
export function createStorefrontService(deps: StorefrontDeps) {
  setProblemTypeBase(`${deps.config.STOREFRONT_PUBLIC_URL}/docs/problems#`);
  return new Elysia({ name: 'storefront-service', normalize: false })
    .use(serviceKit({
      name: 'storefront',
      gatewaySecret: deps.config.GATEWAY_SECRET,
      ready: async () => ({ postgres: await pingSql(deps.sql), redis: deps.redis ? await pingRedis(deps.redis) : false }),
    }))
    .use(storefrontOpenApi(deps.config.STOREFRONT_PUBLIC_URL))
    .use(configRoutes(deps))
    .use(siteRoutes(deps))
    .use(classRoutes(deps))
    .use(instructorRoutes(deps))
    .use(planRoutes(deps))
    .use(policyRoutes(deps));
}
