import type { Sql } from '@studio/shared/db';
import type { Metrics } from '@studio/shared/metrics';
import type { Redis } from '@studio/shared/redis';
import { readiness } from '@studio/shared/readiness';

/**
 * The gateway's operations port (contract §1: `OPS_PORT`, never published to callers):
 * `/metrics` for Prometheus, `/healthz` and `/readyz` for the load balancer.
 */
export function createOpsHandler(metrics: Metrics, sql: Sql, redis: Redis | null, state: { draining: boolean }) {
  return (req: Request): Response | Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') return new Response(null, { status: 405, headers: { allow: 'GET, HEAD' } });
    if (path === '/metrics') return metrics.response();
    if (path === '/healthz') return Response.json({ status: 'ok' });
    if (path === '/readyz') return readiness(sql, redis, state.draining);
    return new Response('not found: /metrics, /healthz, /readyz\n', { status: 404 });
  };
}
