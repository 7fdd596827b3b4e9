import type { Config } from '@studio/shared';
import type { Broadcasts, Metrics, ReadinessCheck, Redis, Sql, Tracing } from '@studio/shared/io';

/** What every dashboard page is built from (its own file, so the pages and the router do not import each other). */
export interface DashboardDeps {
  config: Config;
  sql: Sql;
  /** The process's `/readyz` (the same on the public port as on the operations port: draining, 503 here too). */
  readiness: ReadinessCheck;
  /** How a key change reaches every gateway (Redis, or Postgres in single-node mode), with their confirmation. */
  bus: Broadcasts;
  /**
   * The Redis copies of idempotency records a sandbox's reset drops, as the API's reset does; null in single-node
   * mode or absent (there are none).
   */
  redis?: Redis | null;
  /** Dashboard requests are counted with `surface="dashboard"` (docs/design/observability.md). */
  metrics?: Metrics;
  /** Null unless OTEL_EXPORTER_OTLP_ENDPOINT is set: a dashboard request is a span too. */
  tracing?: Tracing | null;
}
