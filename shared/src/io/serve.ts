/**
 * How a service process listens: one Bun server around the Elysia app that adds what
 * every answer needs from outside the app (docs/design/observability.md): the W3C trace continued
 * from the gateway (`traceresponse` on the answer, the trace id on the access line and
 * in the exported span), request metrics labelled from the operations table, one JSON
 * access line per request, `GET /metrics`; and a graceful drain (`drain`): readiness
 * turns 503, no new connections, in-flight requests finish.
 */
import { redactKeys } from '../apikey';
import { BUN_BODY_CAP } from '../body';
import { type Config, problemTypeBase } from '../config';
import { accessLogOn, jsonResponse, log, logRequest } from '../http';
import { OPERATIONS, type Surface } from '../operations';
import { problemResponse } from '../problem';
import { MALFORMED_DETAIL, type RequestTarget, requestTarget } from '../target';
import { startTrace, TRACEPARENT, TRACERESPONSE, traceparentOf } from '../trace';
import type { Metrics } from './metrics';
import { callerIfSigned } from './service-kit';
import { createTracing } from './tracing';

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

/** On every answer of every port (docs/design/hostile-callers.md): a browser must not guess another type from the bytes. */
export const NOSNIFF_HEADER = 'x-content-type-options';

/**
 * What every Bun server of ours starts with (gateway, services, test harness, scripts):
 * never development mode, whose error page shows a caller the stack, source lines and
 * working directory; a handler that throws gets a bare problem+json 500, the failure
 * going to the log only.
 */
export const SERVE_DEFAULTS = {
  development: false,
  // Bun 1.4 in production mode binds with SO_REUSEPORT unless told not to: a second stack started by mistake would
  // then share every port with the first, and the kernel would hand each connection to one or the other (two
  // databases behind one address). A port in use stops the second process instead (`listenOrExit`).
  reusePort: false,
  maxRequestBodySize: BUN_BODY_CAP,
  error(error: Error): Response {
    log('error', 'unhandled server error', { error: error?.stack ?? String(error) });
    return problemResponse('internal_error', undefined, {
      detail: 'Something went wrong on our side.',
      headers: { [NOSNIFF_HEADER]: 'nosniff' },
    });
  },
};

/**
 * `listen()`, or, when its port is taken, one line naming the variable that sets it, and exit 1 (no stack trace
 * for the operator to read through; `bun run start` shows the line and gives up after its retries).
 */
export function listenOrExit<T>(variable: string, port: number, listen: () => T): T {
  try {
    return listen();
  } catch (err) {
    if ((err as { code?: string })?.code !== 'EADDRINUSE') throw err;
    console.error(
      `error: port ${port} (${variable}) is in use by another process: stop it, or set ${variable} to a free port`,
    );
    process.exit(1);
  }
}

/** `res`, with nosniff set. */
export const withNosniff = (res: Response): Response => (res.headers.set(NOSNIFF_HEADER, 'nosniff'), res);

/** 400 `malformed_request`: the Host or target `requestTarget` refused. */
export const malformedRequest = (typeBase?: string, requestId?: string): Response =>
  problemResponse('malformed_request', requestId, {
    detail: MALFORMED_DETAIL,
    typeBase,
    headers: { [NOSNIFF_HEADER]: 'nosniff' },
  });

/** Where the app finds paths whatever the Host: Elysia reads the path from the 12th character of the URL on. */
const INTERNAL_ORIGIN = 'http://service.internal';

/**
 * The request as the app sees it. Elysia finds the path at `url.indexOf('/', 11)`, so a
 * Host shorter than four characters (a service reached as `http://mg`) would hide the
 * target's first segment: such a request is handed on under a long enough origin.
 */
export function routable(req: Request, t: RequestTarget): Request {
  return req.url.length - t.pathAndQuery.length < 11 ? new Request(INTERNAL_ORIGIN + t.pathAndQuery, req) : req;
}

/** Readiness while draining: the usual checks, but never ready (a load balancer must stop sending work here). */
async function drainingReadiness(app: ServedApp, req: Request): Promise<Response> {
  const checks = (await (await app.handle(req)).json()) as { checks: unknown };
  return jsonResponse(
    { status: 'unavailable', checks: checks.checks },
    { status: 503, headers: { 'cache-control': 'no-store', [NOSNIFF_HEADER]: 'nosniff' } },
  );
}

export function serveService(app: ServedApp, o: ServeOptions) {
  const tracing = createTracing(o.config.OTEL_EXPORTER_OTLP_ENDPOINT, o.name);
  const begin = tracing?.start ?? startTrace;
  const typeBase = problemTypeBase(o.config, o.surface);
  let draining = false;

  async function fetch(received: Request): Promise<Response> {
    const started = performance.now();
    const target = requestTarget(received.url);
    const path = target.path;
    const req = target.valid ? routable(received, target) : received;
    if (target.valid && path === '/metrics') return withNosniff(await o.metrics.response());
    if (target.valid && draining && path === '/readyz') return drainingReadiness(app, req);
    const trace = begin(req.headers.get(TRACEPARENT));
    const res = target.valid ? await app.handle(req) : malformedRequest(typeBase);
    res.headers.set(TRACERESPONSE, traceparentOf(trace));
    res.headers.set(NOSNIFF_HEADER, 'nosniff');
    // the operation, request id and key as the gateway signed them: headers whose signature did not hold (or an
    // unsigned call, health) name nothing, so a caller reaching this port cannot write a label or a line of its own
    const caller = callerIfSigned(req);
    const operation = caller && OPERATION_IDS.has(caller.operationId) ? caller.operationId : 'unknown';
    const seconds = (performance.now() - started) / 1000;
    o.metrics.request(o.surface, operation, res.status, seconds);
    if (accessLogOn(res.status))
      logRequest({
        requestId: caller?.requestId ?? null,
        traceId: trace.traceId,
        surface: o.surface,
        operation,
        method: req.method,
        path: redactKeys(path),
        status: res.status,
        durationMs: Math.round(seconds * 100_000) / 100,
        keyId: caller?.keyId ?? null,
      });
    tracing?.end(trace, { method: req.method, path, status: res.status, operation });
    return res;
  }

  const server = Bun.serve({ ...SERVE_DEFAULTS, hostname: o.hostname, port: o.port, fetch });
  return {
    server,
    url: server.url.href.replace(/\/$/, ''),
    /** Readiness 503 at once, stop accepting, let in-flight requests finish (at most `graceMs`). */
    async drain(graceMs = 10_000) {
      draining = true;
      await Promise.race([server.stop(false), Bun.sleep(graceMs).then(() => server.stop(true))]);
      await tracing?.shutdown();
    },
    stop: () => server.stop(true),
  };
}
export type ServedService = ReturnType<typeof serveService>;
