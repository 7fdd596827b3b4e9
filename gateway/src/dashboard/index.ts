import {
  AppError,
  accessLogOn,
  type Config,
  etagMatches,
  etagOf,
  jsonResponse,
  log,
  logRequest,
  newRequestId,
  redactKeys,
} from '@studio/shared';
import { readBody } from '@studio/shared/body';
import { malformedRequest } from '@studio/shared/io/serve';
import { translatePgError } from '@studio/shared/pg-errors';
import { requestTarget } from '@studio/shared/target';
import { startTrace, TRACEPARENT, TRACERESPONSE, traceparentOf } from '@studio/shared/trace';
import { activityEntryPage, activityPage } from './activity';
import type { DashboardDeps } from './deps';
import { chromeOf, messagePage, redirect, SECURITY_HEADERS } from './html';
import { keyOrigins, renameKey, rollKey } from './key-actions';
import { createKey, keysPage, revokedNotice, revokeKey } from './keys';
import { csrfMatches, loadSession, type Session, sameOrigin } from './session';
import { loginLinkPage, signInPage, signOut, useLoginLink } from './signin';
import {
  createWebhook,
  DELIVERY_ID,
  deletedNotice,
  ENDPOINT_ACTIONS,
  ENDPOINT_ID,
  type EndpointAction,
  endpointAction,
  endpointView,
  replayWebhookDelivery,
  webhooksPage,
} from './webhooks';

const MAX_FORM_BYTES = 64 * 1024;
const ASSETS: Record<string, string> = {
  '/assets/dashboard.css': 'text/css; charset=utf-8',
  '/assets/dashboard.js': 'text/javascript; charset=utf-8',
};

type Handler = (req: Request, url: URL) => Promise<Response> | Response;
type SessionHandler = (req: Request, url: URL, s: Session, form: FormData | null) => Promise<Response> | Response;

/** What to do with one key, by the last segment of `/keys/{keyId}/…`; `form` is null on GET. */
const KEY_ACTIONS: Record<
  string,
  (deps: DashboardDeps, s: Session, keyId: string, form: FormData | null) => Promise<Response>
> = {
  roll: rollKey,
  rename: renameKey,
  origins: keyOrigins,
};
const KEY_PATH = /^\/keys\/(key_[0-9A-Za-z]{1,64})\/(revoke|roll|rename|origins)$/;
const ENTRY_PATH = /^\/activity\/([0-9A-Za-z_-]{1,100})$/;
/** `/webhooks/{endpointId}` (its delivery log) and `/webhooks/{endpointId}/{action}`. */
const ENDPOINT_PATH = new RegExp(`^/webhooks/${ENDPOINT_ID}(?:/(${ENDPOINT_ACTIONS.join('|')}))?$`);
const REPLAY_PATH = new RegExp(`^/webhooks/${ENDPOINT_ID}/deliveries/${DELIVERY_ID}/replay$`);

/** The route a path belongs to, for metrics and the access line: a route's name, never the raw path (bounded labels). */
function routeName(path: string, fixed: Record<string, unknown>): string {
  const key = KEY_PATH.exec(path);
  if (key) return `/keys/{keyId}/${key[2]}`;
  if (ENTRY_PATH.test(path)) return '/activity/{requestId}';
  const endpoint = ENDPOINT_PATH.exec(path);
  if (endpoint) return `/webhooks/{endpointId}${endpoint[2] ? `/${endpoint[2]}` : ''}`;
  if (REPLAY_PATH.test(path)) return '/webhooks/{endpointId}/deliveries/{deliveryId}/replay';
  return Object.hasOwn(fixed, path) ? path : 'unknown';
}

async function readForm(req: Request, config: Config): Promise<FormData | Response> {
  const type = req.headers.get('content-type') ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data'))
    return messagePage(415, 'Unsupported form', 'This page accepts only HTML form submissions.');
  // read bounded whatever its framing: a chunked body has no length to check first (signed out too, at /login)
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await readBody(req, MAX_FORM_BYTES, config.REQUEST_BODY_TIMEOUT_MS);
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'request_timeout'))
      return messagePage(413, 'Form too large', 'That form was too large.');
    // what is left of the form is never read: the connection closes with the answer
    const res = messagePage(408, 'Form too slow', 'That form took too long to arrive. Go back and try again.');
    res.headers.set('connection', 'close');
    return res;
  }
  try {
    return await new Response(bytes, { headers: { 'content-type': type } }).formData();
  } catch {
    return messagePage(400, 'Unreadable form', 'That form could not be read. Go back and try again.');
  }
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

/** Pages that need a session: none without one, and every POST checks Origin and the CSRF token. */
function sessionGuard(deps: DashboardDeps) {
  const { sql, config } = deps;
  return (h: SessionHandler): Handler =>
    async (req, url) => {
      const s = await loadSession(sql, config, req);
      if (!s) return redirect('/sign-in');
      if (req.method !== 'POST') return h(req, url, s, null);
      const form = await readForm(req, config);
      if (form instanceof Response) return form;
      if (!sameOrigin(config, req) || !csrfMatches(s, form.get('csrf')))
        return messagePage(
          403,
          'Form expired',
          'This form is out of date or did not come from this site. Reload the page and try again.',
          chromeOf(config, s, 'keys'),
        );
      return h(req, url, s, form);
    };
}

function dashboardRoutes(deps: DashboardDeps): Record<string, Partial<Record<'GET' | 'POST', Handler>>> {
  const { config, readiness } = deps;
  const signedIn = sessionGuard(deps);
  const asset = assets();
  const routes: Record<string, Partial<Record<'GET' | 'POST', Handler>>> = {
    '/': { GET: () => redirect('/keys') },
    '/healthz': { GET: () => jsonResponse({ status: 'ok' }) }, // as every port answers it
    '/readyz': { GET: () => readiness() },
    '/sign-in': {
      GET: (_req, url) => signInPage(url.searchParams.has('signed-out') ? 'You are signed out.' : undefined),
    },
    '/login': {
      GET: (_req, url) => loginLinkPage(deps, url),
      POST: async (req) => {
        if (!sameOrigin(config, req)) return messagePage(403, 'Form expired', 'This form did not come from this site.');
        const form = await readForm(req, config);
        return form instanceof Response ? form : useLoginLink(deps, req, form);
      },
    },
    '/logout': { POST: signedIn((_req, _url, s) => signOut(deps, s)) },
    '/keys': {
      GET: signedIn(async (_req, url, s) =>
        keysPage(deps, s, {
          notice: await revokedNotice(deps, s, url.searchParams.get('revoked')),
          hideInactive: url.searchParams.get('hide') === 'inactive',
        }),
      ),
      POST: signedIn((_req, _url, s, form) => createKey(deps, s, form!)),
    },
    '/activity': { GET: signedIn((_req, url, s) => activityPage(deps, s, url)) },
    '/webhooks': {
      GET: signedIn((_req, url, s) => webhooksPage(deps, s, { notice: deletedNotice(url) })),
      POST: signedIn((_req, _url, s, form) => createWebhook(deps, s, form!)),
    },
  };
  for (const path of Object.keys(ASSETS)) routes[path] = { GET: (req) => asset(req, path) };
  return routes;
}

/** The methods a path answers: the static routes, or a key's, an endpoint's, an entry's or a delivery's page. */
function pathMethods(
  deps: DashboardDeps,
  routes: ReturnType<typeof dashboardRoutes>,
  signedIn: ReturnType<typeof sessionGuard>,
  path: string,
): Partial<Record<'GET' | 'POST', Handler>> | undefined {
  const key = KEY_PATH.exec(path);
  const entry = ENTRY_PATH.exec(path);
  if (entry) return { GET: signedIn((_req, _url, s) => activityEntryPage(deps, s, entry[1]!)) };
  const endpoint = ENDPOINT_PATH.exec(path);
  if (endpoint) {
    const [, endpointId, action] = endpoint as unknown as [string, string, EndpointAction | undefined];
    if (!action) return { GET: signedIn((_q, url, s) => endpointView(deps, s, endpointId, url)) };
    const post = signedIn((_q, _u, s, form) => endpointAction(deps, s, endpointId, action, form));
    return action === 'roll'
      ? { GET: signedIn((_q, _u, s) => endpointAction(deps, s, endpointId, action, null)), POST: post }
      : { POST: post };
  }
  const replay = REPLAY_PATH.exec(path);
  if (replay) return { POST: signedIn((_q, _u, s) => replayWebhookDelivery(deps, s, replay[1]!, replay[2]!)) };
  if (!key) return routes[path];
  const [, keyId, action] = key as unknown as [string, string, string];
  if (action === 'revoke') return { POST: signedIn((_q, _u, s, form) => revokeKey(deps, s, keyId, form!)) };
  const run = KEY_ACTIONS[action]!;
  return {
    GET: signedIn((_q, _u, s) => run(deps, s, keyId, null)),
    POST: signedIn((_q, _u, s, form) => run(deps, s, keyId, form)),
  };
}

/**
 * Developer settings pages on the dashboard port: server-rendered HTML, plain
 * routing (a handful of pages), POST-redirect-GET, a session cookie and a
 * per-session CSRF token on every form.
 */
export function createDashboard(deps: DashboardDeps) {
  const routes = dashboardRoutes(deps);
  const signedIn = sessionGuard(deps);

  const methodsOf = (path: string) => pathMethods(deps, routes, signedIn, path);

  function route(req: Request, url: URL): Promise<Response> | Response {
    const methods = methodsOf(url.pathname);
    if (!methods) return messagePage(404, 'Page not found', 'There is no page at this address.');
    const h = methods[(req.method === 'HEAD' ? 'GET' : req.method) as 'GET' | 'POST'];
    if (h) return h(req, url);
    const res = messagePage(405, 'Method not allowed', 'This page does not accept that kind of request.');
    res.headers.set('allow', Object.keys(methods).join(', '));
    return res;
  }

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
      // a Host no URL parser accepts is refused before anything builds a URL of it (docs/design/hostile-callers.md)
      res = target.valid ? await route(req, new URL(req.url)) : malformedRequest(undefined, requestId);
    } catch (err) {
      res = failurePage(err, requestId, target.path);
    }
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.headers.set(k, v);
    res.headers.set('x-request-id', requestId);
    res.headers.set(TRACERESPONSE, traceparentOf(trace));
    const operation = target.valid ? routeName(target.path, routes) : 'unknown';
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
