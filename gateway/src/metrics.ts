import type { Metrics } from '@studio/shared/io';
import type { ActivityWriter } from './activity/writer';

/** The gateway's own metrics (docs/design/observability.md), beside the request counts every process has. */
export function gatewayMetrics(m: Metrics, activity: ActivityWriter) {
  m.gauge(
    'studio_activity_buffered',
    'Activity entries recorded and not yet written to Postgres.',
    () => activity.buffered,
  );
  m.total('studio_activity_written_total', 'Activity entries written to Postgres.', () => activity.written);
  m.total(
    'studio_activity_dropped_total',
    'Activity entries dropped (the buffer is bounded while Postgres is away).',
    () => activity.dropped,
  );
  m.total(
    'studio_activity_flush_failures_total',
    'Activity flushes that failed (Postgres away); their entries wait for the next one.',
    () => activity.failedFlushes,
  );
  return {
    requests: m,
    keyLookups: m.counter(
      'studio_key_cache_lookups_total',
      'Key lookups by where they were answered: memory, stale (memory, while refreshing), redis, postgres.',
      ['result'] as const,
    ),
    limitDecisions: m.counter(
      'studio_rate_limit_decisions_total',
      'Rate-limit decisions: allowed, limited, revoked, fail_open (Redis could not decide).',
      ['decision'] as const,
    ),
    testModeRequests: m.counter(
      'studio_test_mode_requests_total',
      'Calls made with a test key, on a sandbox (docs/design/test-mode.md), by surface: live calls are the rest of studio_http_requests_total.',
      ['surface'] as const,
    ),
    upstreamErrors: m.counter(
      'studio_upstream_errors_total',
      'Calls to a service that failed: timeout or unavailable.',
      ['surface', 'kind'] as const,
    ),
  };
}
export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;
