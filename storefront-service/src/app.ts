import { registerOperations, serviceKit } from '@studio/shared/io';
import { Elysia } from 'elysia';
import { classHandlers } from './classes/routes';
import { configHandlers } from './config/routes';
import { instructorHandlers } from './instructors/routes';
import type { StorefrontDeps } from './kit/deps';
import { planHandlers } from './plans/routes';
import { policyHandlers } from './policies/routes';
import { siteHandlers } from './site/routes';

/** The Storefront service: public, read-only data of the caller's studio, one handler per registry row. Never listens itself. */
export function createStorefrontService(deps: StorefrontDeps) {
  return new Elysia({ name: 'storefront-service', normalize: false })
    .use(
      serviceKit({ name: 'storefront', surface: 'storefront', config: deps.config, sql: deps.sql, redis: deps.redis }),
    )
    .use(
      registerOperations('storefront', {
        ...configHandlers(deps),
        ...siteHandlers(deps),
        ...classHandlers(deps),
        ...instructorHandlers(deps),
        ...planHandlers(deps),
        ...policyHandlers(deps),
      }),
    );
}
