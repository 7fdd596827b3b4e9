import type { Config } from '@studio/shared';
import type { Redis, Sql } from '@studio/shared/io';

/** What the Storefront service is built from (`main.ts` or a test makes them); the service kit's readiness reads `redis`. */
export interface StorefrontDeps {
  config: Config;
  sql: Sql;
  redis: Redis | null;
}
