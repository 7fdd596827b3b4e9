/**
 * How a service process listens: one Bun server around the Elysia app that adds what
 * every answer needs from outside the app (contract §13): the W3C trace continued
 * from the gateway (`traceresponse` on the answer, the trace id on the access line and
 * in the exported span), request metrics labelled from the operations table, one JSON
 * access line per request, `GET /metrics`; and a graceful drain (`drain`): readiness
 * turns 503, no new connections, in-flight requests finish.
 */
import { BUN_BODY_CAP } from './body';
import type { Config } from './config';
import { accessLogOn, logRequest } from './http';
import { OPERATIONS, type Surface } from './operations';
import { createSpanExporter } from './otlp';
import { GW, REQUEST_ID } from './signing';
import { startTrace, traceparentOf, TRACEPARENT, TRACERESPONSE } from './trace';
import type { Metrics } from './metrics';

export interface ServeOptions {
  name: string;
  surface: Surface;
  config: Config;
  metrics: Metrics;
  hostname: string;
  port: number;
}

const OPERATION_IDS = new Set<string>(OPERATIONS.map((o) => o.id));

export interface ServedApp {
  handle(request: Request): Response | Promise<Response>;
}

function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const q = url.indexOf('?', start);
  return start < 0 ? '/' : url.slice(start, q < 0 ? undefined : q);
}

export function serveService(app: ServedApp, o: ServeOptions) {
  const spans = createSpanExporter(o.config.OTEL_EXPORTER_OTLP_ENDPOINT, o.name);
  let draining = false;

  async function fetch(req: Request): Promise<Response> {
    const started = performance.now();
    const path = pathOf(req.url);
    if (path === '/metrics') return o.metrics.response();
    if (draining && path === '/readyz') {
      // the usual checks, but never ready: a load balancer must stop sending work here
      const checks = (await (await app.handle(req)).json()) as { checks: unknown };
      return Response.json({ status: 'unavailable', checks: checks.checks }, { status: 503, headers: { 'cache-control': 'no-store' } });
    }
    const trace = startTrace(req.headers.get(TRACEPARENT));
    const res = await app.handle(req);
    res.headers.set(TRACERESPONSE, traceparentOf(trace));
    // the operation as the gateway signed it; anything else (health, unsigned calls) is one label
    const claimed = req.headers.get(GW.operation);
    const operation = claimed && OPERATION_IDS.has(claimed) ? claimed : 'unknown';
    const seconds = (performance.now() - started) / 1000;
    o.metrics.request(o.surface, operation, res.status, seconds);
    if (accessLogOn()) logRequest({
      requestId: req.headers.get(REQUEST_ID), traceId: trace.traceId, surface: o.surface, operation, method: req.method, path,
      status: res.status, durationMs: Math.round(seconds * 100_000) / 100, keyId: req.headers.get(GW.key),
    });
    if (spans && trace.flags.endsWith('1')) spans.end(trace, { name: `${req.method} ${operation}`, status: res.status, attributes: { 'http.request.method': req.method, 'url.path': path, 'studio.operation': operation } });
    return res;
  }

  const server = Bun.serve({ hostname: o.hostname, port: o.port, maxRequestBodySize: BUN_BODY_CAP, fetch });
  return {
    server,
    url: `http://${o.hostname}:${server.port}`,
    /** Readiness 503 at once, stop accepting, let in-flight requests finish (at most `graceMs`). */
    async drain(graceMs = 10_000) {
      draining = true;
      await Promise.race([server.stop(false), Bun.sleep(graceMs).then(() => server.stop(true))]);
      await spans?.flush();
      spans?.close();
    },
    stop: () => server.stop(true),
  };
}
export type ServedService = ReturnType<typeof serveService>;
