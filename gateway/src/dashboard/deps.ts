import type { Config } from '@studio/shared';
import type { Sql } from '@studio/shared/io/db';
import type { Metrics } from '@studio/shared/io/metrics';
import type { ReadinessCheck } from '@studio/shared/io/readiness';
import type { Tracing } from '@studio/shared/io/tracing';
import type { ActivityWriter } from '../activity/writer';
import type { Broadcasts } from '../broadcasts/bus';

/** What every dashboard page is built from (its own file, so the pages and the router do not import each other). */
export interface DashboardDeps {
  config: Config;
  sql: Sql;
  /** The gateway's `/readyz` (the same on every port: draining or paused, 503 here too). */
  readiness: ReadinessCheck;
  /** How a key change reaches every gateway (Redis, or Postgres in single-node mode). */
  bus: Broadcasts;
  activity: ActivityWriter;
  /** The gateway's metrics: dashboard requests are counted with `surface="dashboard"` (docs/design/observability.md). */
  metrics?: Metrics;
  /** The gateway's tracing (null unless OTEL_EXPORTER_OTLP_ENDPOINT is set): a dashboard request is a span too. */
  tracing?: Tracing | null;
}
