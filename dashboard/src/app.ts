import {
  accessLogOn,
  etagMatches,
  etagOf,
  jsonResponse,
  log,
  logRequest,
  newRequestId,
  redactKeys,
  requestTarget,
  startTrace,
  TRACEPARENT,
  TRACERESPONSE,
  traceparentOf,
  translatePgError,
} from '@studio/shared';
import { malformedRequest, routable } from '@studio/shared/io';
import { Elysia } from 'elysia';
import { activityRoutes } from './activity/routes';
import type { DashboardDeps } from './deps';
import { sessionGuard } from './guard';
import { messagePage, redirect, SECURITY_HEADERS } from './html';
import { keysRoutes } from './keys/routes';
import { notAllowed, notFound } from './routing';
import { SANDBOX_ACTIONS, sandboxesRoutes } from './sandboxes/routes';
import { signinRoutes } from './signin/routes';
import { webhooksRoutes } from './webhooks/routes';
import { DELIVERY_ID, ENDPOINT_ACTIONS, ENDPOINT_ID } from './webhooks/service';

const ASSETS: Record<string, string> = {
  '/assets/dashboard.css': 'text/css; charset=utf-8',
  '/assets/dashboard.js': 'text/javascript; charset=utf-8',
};

const KEY_PATH = /^\/keys\/(key_[0-9A-Za-z]{1,64})\/(revoke|roll|rename|origins)$/;
const ENTRY_PATH = /^\/activity\/([0-9A-Za-z_-]{1,100})$/;
/** `/webhooks/{endpointId}` (its delivery log) and `/webhooks/{endpointId}/{action}`. */
const ENDPOINT_PATH = new RegExp(`^/webhooks/${ENDPOINT_ID}(?:/(${ENDPOINT_ACTIONS.join('|')}))?$`);
const REPLAY_PATH = new RegExp(`^/webhooks/${ENDPOINT_ID}/deliveries/${DELIVERY_ID}/replay$`);
const SANDBOX_PATH = new RegExp(`^/sandboxes/std_[0-9A-Za-z]{1,64}/(${SANDBOX_ACTIONS.join('|')})$`);
const FIXED = new Set([
  '/',
  '/healthz',
  '/readyz',
  '/sign-in',
  '/login',
  '/logout',
  '/keys',
  '/activity',
  '/webhooks',
  '/mode',
  '/sandboxes',
]);

/** The route a path belongs to, for metrics and the access line: a route's name, never the raw path (bounded labels). */
function routeName(path: string): string {
  const key = KEY_PATH.exec(path);
  if (key) return `/keys/{keyId}/${key[2]}`;
  if (ENTRY_PATH.test(path)) return '/activity/{requestId}';
  const endpoint = ENDPOINT_PATH.exec(path);
  if (endpoint) return `/webhooks/{endpointId}${endpoint[2] ? `/${endpoint[2]}` : ''}`;
  if (REPLAY_PATH.test(path)) return '/webhooks/{endpointId}/deliveries/{deliveryId}/replay';
  const sandbox = SANDBOX_PATH.exec(path);
  if (sandbox) return `/sandboxes/{sandboxId}/${sandbox[1]}`;
  return FIXED.has(path) || Object.hasOwn(ASSETS, path) ? path : 'unknown';
}

/** The dashboard's own files, read once, with an ETag. */
function assets() {
  const cache = new Map<string, { body: string; etag: string }>();
  return async (req: Request, path: string): Promise<Response> => {
    let a = cache.get(path);
    if (!a) {
      const body = await Bun.file(new URL(`.${path}`, import.meta.url)).text();
      cache.set(path, (a = { body, etag: etagOf(body) }));
    }
    const headers = { 'content-type': ASSETS[path]!, etag: a.etag, 'cache-control': 'no-cache' };
    if (etagMatches(req.headers.get('if-none-match'), a.etag)) return new Response(null, { status: 304, headers });
    return new Response(a.body, { headers });
  };
}

/**
 * The dashboard's routes (Elysia, as the services'): each resource's own (sign-in, keys, activity, webhooks,
 * sandboxes and the mode switch), the
 * process's health on its public port, and its files. A page that throws is answered by `failurePage`.
 */
export function dashboardApp(deps: DashboardDeps) {
  const signedIn = sessionGuard(deps);
  const asset = assets();
  const app = new Elysia({ name: 'dashboard', strictPath: true })
    .onError(({ code, error, request }) =>
      code === 'NOT_FOUND'
        ? notFound()
        : failurePage(error, requestIds.get(request) ?? '', requestTarget(request.url).path),
    )
    .get('/', () => redirect('/keys'))
    .all('/', notAllowed('GET'))
    .get('/healthz', () => jsonResponse({ status: 'ok' })) // as every port answers it
    .all('/healthz', notAllowed('GET'))
    .get('/readyz', () => deps.readiness())
    .all('/readyz', notAllowed('GET'))
    .use(signinRoutes(deps, signedIn))
    .use(keysRoutes(deps, signedIn))
    .use(activityRoutes(deps, signedIn))
    .use(webhooksRoutes(deps, signedIn))
    .use(sandboxesRoutes(deps, signedIn));
  for (const path of Object.keys(ASSETS))
    app.get(path, ({ request }) => asset(request, path)).all(path, notAllowed('GET'));
  return app;
}

/** Each request's id, for the failure page of a page that threw (Elysia's error handler sees the request only). */
const requestIds = new WeakMap<Request, string>();

/**
 * Developer settings pages on the dashboard port: server-rendered HTML, POST-redirect-GET, a session cookie and a
 * per-session CSRF token on every form. Around the app, what every answer needs (as `serveService` gives the
 * services): security headers, request id, trace, metrics and the access line.
 */
export function createDashboard(deps: DashboardDeps) {
  const app = dashboardApp(deps);
  const begin = deps.tracing?.start ?? startTrace;
  return async (req: Request): Promise<Response> => {
    const started = performance.now();
    const at = Date.now();
    const requestId = newRequestId(at);
    // a trace as on the API surfaces: continued from the caller's traceparent, answered in traceresponse, logged
    const trace = begin(req.headers.get(TRACEPARENT), at);
    const target = requestTarget(req.url);
    let res: Response;
    try {
      if (target.valid) {
        const routed = routable(req, target);
        requestIds.set(routed, requestId);
        res = await app.handle(routed);
      } else {
        // a Host no URL parser accepts is refused before anything builds a URL of it (docs/design/hostile-callers.md)
        res = malformedRequest(undefined, requestId);
      }
    } catch (err) {
      res = failurePage(err, requestId, target.path);
    }
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.headers.set(k, v);
    res.headers.set('x-request-id', requestId);
    res.headers.set(TRACERESPONSE, traceparentOf(trace));
    const operation = target.valid ? routeName(target.path) : 'unknown';
    observe(deps, {
      req,
      path: target.path,
      operation,
      status: res.status,
      started,
      requestId,
      traceId: trace.traceId,
    });
    deps.tracing?.end(trace, {
      method: req.method,
      path: target.path,
      status: res.status,
      operation,
      surface: 'dashboard',
    });
    return res;
  };
}

/** A page that threw: the database away is an outage, said as one (503, retry shortly), as the API surfaces answer it; anything else is ours (500). */
function failurePage(err: unknown, requestId: string, path: string): Response {
  const unavailable = translatePgError(err)?.code === 'service_unavailable';
  log(unavailable ? 'warn' : 'error', 'dashboard request failed', {
    requestId,
    path: redactKeys(path),
    error: String(err),
  });
  if (!unavailable)
    return messagePage(
      500,
      'Something went wrong',
      `Please try again. If it keeps happening, quote request id ${requestId}.`,
    );
  const res = messagePage(
    503,
    'Temporarily unavailable',
    `The dashboard cannot reach its database just now. Try again in a few seconds (request id ${requestId}).`,
  );
  res.headers.set('retry-after', '1');
  return res;
}

/**
 * Logged and counted like the API's calls (docs/design/observability.md); the path only,
 * never the query (a login link's token).
 */
function observe(
  deps: DashboardDeps,
  call: {
    req: Request;
    path: string;
    operation: string;
    status: number;
    started: number;
    requestId: string;
    traceId: string;
  },
): void {
  const seconds = (performance.now() - call.started) / 1000;
  deps.metrics?.request('dashboard', call.operation, call.status, seconds);
  if (!accessLogOn(call.status)) return;
  logRequest({
    requestId: call.requestId,
    traceId: call.traceId,
    surface: 'dashboard',
    operation: call.operation,
    method: call.req.method,
    // a key pasted into a dashboard URL (a 404) is never written out
    path: redactKeys(call.path),
    status: call.status,
    durationMs: Math.round(seconds * 100_000) / 100,
    keyId: null,
  });
}
