import { jsonResponse } from '../http';
import { requestTarget } from '../target';
import type { Metrics } from './metrics';
import type { ReadinessCheck } from './readiness';
import { malformedRequest, withNosniff } from './serve';

/**
 * A process's operations port (docs/design/processes.md: the gateway's `OPS_PORT`, the dashboard's `DASHBOARD_OPS_PORT`;
 * never published to callers):
 * `/metrics` for Prometheus, `/healthz` and `/readyz` for the load balancer.
 */
export function createOpsHandler(metrics: Metrics, readiness: ReadinessCheck) {
  function answer(req: Request): Response | Promise<Response> {
    const { path, valid } = requestTarget(req.url);
    if (!valid) return malformedRequest();
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return new Response(null, { status: 405, headers: { allow: 'GET, HEAD' } });
    if (path === '/metrics') return metrics.response();
    if (path === '/healthz') return jsonResponse({ status: 'ok' });
    if (path === '/readyz') return readiness();
    return new Response('not found: /metrics, /healthz, /readyz\n', { status: 404 });
  }
  return (req: Request): Response | Promise<Response> => {
    const res = answer(req);
    return res instanceof Promise ? res.then(withNosniff) : withNosniff(res);
  };
}
