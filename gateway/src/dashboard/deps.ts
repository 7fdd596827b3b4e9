import type { Config } from '@studio/shared';
import type { Sql } from '@studio/shared/db';
import type { Metrics } from '@studio/shared/metrics';
import type { Redis } from '@studio/shared/redis';
import type { ActivityWriter } from '../activity/writer';

/** What every dashboard page is built from (its own file, so the pages and the router do not import each other). */
export interface DashboardDeps {
  config: Config;
  sql: Sql;
  redis: Redis | null;
  activity: ActivityWriter;
  /** The gateway's metrics: dashboard requests are counted with `surface="dashboard"` (contract §13). */
  metrics?: Metrics;
}
