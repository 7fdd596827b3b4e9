import type { Config } from '@studio/shared';
import type { Metrics, Redis, Sql } from '@studio/shared/io';

/** What the Management service is built from: every resource's handlers and the write runner take these. */
export interface ManagementDeps {
  config: Config;
  sql: Sql;
  redis: Redis | null;
  /** Where the service counts what docs/design/observability.md asks (its idempotency outcomes). */
  metrics?: Metrics;
}
