import { MAX_BODY_BYTES, tooLarge } from '@studio/shared/body';
import {
  AppError, hashKey, JSON_TYPE, log, newRequestId, parseKey, problemResponse, problemTypeBase, REQUEST_ID,
  type Caller, type Config, type Operation, type ProblemCode, type ProblemOptions, type Surface,
} from '@studio/shared';
import { compileRouter, type RouteMatch } from './forward/router';
import { forward, UpstreamError } from './forward/proxy';
import type { KeyRecord, KeyResolver } from './keys/resolver';
import type { LimitResult, RateLimiter } from './forward/ratelimit';
import { outcomeOf, type ActivityWriter } from './activity/writer';
import type { DocsHandler } from './docs';
import { StorefrontCache } from './forward/storefront-cache';

export interface SurfaceDeps {
  config: Config;
  keys: KeyResolver;
  limiter: RateLimiter;
  activity: ActivityWriter;
  docs: DocsHandler;
  /** Storefront answers cache; Management writes invalidate it. */
  storefrontCache?: StorefrontCache;
}

type Server = { requestIP(req: Request): { address: string } | null };

const KIND_OF: Record<Surface, 'publishable' | 'secret'> = { storefront: 'publishable', management: 'secret' };
export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, ETag, Location, Idempotent-Replayed',
};

function pathAndQueryOf(url: string): [string, string] {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const pq = start < 0 ? '/' : url.slice(start);
  const q = pq.indexOf('?');
  return [q < 0 ? pq : pq.slice(0, q), pq];
}

type Auth = { key: KeyRecord; hash: string } | { problem: ProblemCode; key?: KeyRecord };

/**
 * One surface of the gateway (contract §3): route -> key -> studio/scope -> rate
 * limit -> signed forward. Every request whose key resolves to a studio leaves an
 * activity entry, whatever the outcome.
 */
export function createSurfaceHandler(surface: Surface, deps: SurfaceDeps) {
  const { config, keys, limiter, activity, docs } = deps;
  const match = compileRouter(surface);
  const kind = KIND_OF[surface];
  const upstream = surface === 'storefront' ? config.STOREFRONT_SERVICE_URL : config.MANAGEMENT_SERVICE_URL;
  const trusted = new Set(config.TRUSTED_PROXIES.split(',').map((s) => s.trim()).filter(Boolean));
  const cors = surface === 'storefront';

  /** Authorization headers already parsed and hashed: a site's visitors all send the same one. */
  const parsedHeaders = new Map<string, { hash: string }>();

  /** The key text's hash, or why the header is unusable (format and checksum: no lookup needed). */
  function parseAuthorization(header: string | null): { hash: string } | { problem: ProblemCode } {
    if (!header) return { problem: 'api_key_missing' };
    const known = parsedHeaders.get(header);
    if (known) return known;
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!m || !parseKey(m[1]!)) return { problem: 'api_key_invalid' };
    const parsed = { hash: hashKey(m[1]!) };
    if (parsedHeaders.size >= 10_000) parsedHeaders.clear();
    parsedHeaders.set(header, parsed);
    return parsed;
  }

  function judge(key: KeyRecord | null, hash: string): Auth {
    if (!key) return { problem: 'api_key_invalid' };
    if (key.revoked) return { problem: 'api_key_revoked', key };
    // checked on every request against the record's own instant, so no cache can stretch it
    if (key.expiresAt !== null && Date.now() >= key.expiresAt) return { problem: 'api_key_expired', key };
    if (key.kind !== kind) return { problem: 'api_key_wrong_kind', key };
    return { key, hash };
  }

  function clientAddress(req: Request, server: Server): string {
    const peer = server.requestIP(req)?.address ?? 'unknown';
    if (trusted.has(peer)) {
      const xff = req.headers.get('x-forwarded-for');
      const first = xff?.split(',')[0]?.trim();
      if (first) return first;
    }
    return peer;
  }

  /** Headers every answer of this surface carries (CORS allows any origin, so nothing varies by Origin). */
  const surfaceHeaders = (requestId: string, extra?: Record<string, string>): Record<string, string> =>
    cors ? { [REQUEST_ID]: requestId, ...CORS_HEADERS, ...extra } : { [REQUEST_ID]: requestId, ...extra };

  function decorate(res: Response, requestId: string, extra?: Record<string, string>): Response {
    const add = surfaceHeaders(requestId, extra);
    for (const k in add) res.headers.set(k, add[k]!);
    return res;
  }

  const typeBase = problemTypeBase(config, surface);
  const fail = (code: ProblemCode, requestId: string, o: ProblemOptions = {}) => problemResponse(code, requestId, { typeBase, ...o });
  const forwardOptions = { upstream, secret: config.GATEWAY_SECRET, timeoutMs: config.UPSTREAM_TIMEOUT_MS };
  const sfCache = surface === 'storefront' ? deps.storefrontCache : undefined;

  /**
   * A Storefront GET the cache could not answer fresh: an expired entry while a single
   * refresh runs, else one shared upstream call for every concurrent miss.
   */
  async function viaCache(cache: StorefrontCache, req: Request, pathAndQuery: string, caller: Caller, extra: Record<string, string>): Promise<Response> {
    const key = StorefrontCache.keyOf(pathAndQuery);
    const conditional = req.headers.get('if-none-match');
    const acceptEncoding = req.headers.get('accept-encoding');
    // the client's own validators stay here: upstream is asked for the full answer, or to confirm the kept one
    const load = (etag: string | null) =>
      forward(new Request(req.url, { headers: etag ? { accept: JSON_TYPE, 'if-none-match': etag } : { accept: JSON_TYPE } }), pathAndQuery, caller, forwardOptions);
    const stale = cache.stale(caller.studioId, key, conditional, acceptEncoding, extra);
    if (stale) {
      cache.fill(caller.studioId, key, null, null, load).catch((err) => log('warn', 'storefront cache refresh failed', { error: String(err) }));
      return stale;
    }
    return cache.fill(caller.studioId, key, conditional, acceptEncoding, load, extra);
  }

  /** One request's facts, carried through the steps below. */
  interface Ctx {
    req: Request;
    server: Server;
    started: number;
    requestId: string;
    method: string;
    path: string;
    pathAndQuery: string;
    op: Operation | null;
    key?: KeyRecord;
  }

  /** Records the activity entry (when the key resolved to a studio) and adds the surface's headers, unless `extra` is null (already built in). */
  function done(c: Ctx, res: Response, extra?: Record<string, string> | null): Response {
    const key = c.key;
    if (key) {
      activity.record({
        studioId: key.studioId, keyId: key.id, operationId: c.op?.id ?? null, method: c.method, path: c.path,
        status: res.status, outcome: outcomeOf(res.status), durationMs: Math.round((performance.now() - c.started) * 100) / 100,
        requestId: c.requestId, at: Date.now(),
      });
    }
    return extra === null ? res : decorate(res, c.requestId, extra);
  }

  /**
   * Every step below returns a Response when it can decide from memory (key record,
   * rate-limit lease, cached answer) and a Promise only when it must wait on I/O, so
   * the common request never yields to the event loop.
   */
  function afterAuth(c: Ctx, route: RouteMatch, auth: Auth): Response | Promise<Response> {
    c.key = auth.key;
    const { requestId, path, method } = c;
    if (!route) return done(c, fail('route_not_found', requestId, { detail: `No route ${path} on the ${surface} surface.` }));
    const op = c.op;
    if (!op) {
      const allow = (route as { allow: string[] }).allow.join(', ');
      return done(c, fail('method_not_allowed', requestId, { detail: `${method} is not allowed on ${path}; allowed: ${allow}.`, headers: { allow } }));
    }
    if ('problem' in auth) return done(c, fail(auth.problem, requestId, { detail: authDetail(auth.problem, surface) }));
    const k = auth.key;
    if (!k.studioLive) return done(c, fail('studio_required', requestId, { detail: 'The key belongs to a studio that no longer exists.' }));
    if (op.scope && !k.scopes.includes(op.scope)) {
      return done(c, fail('scope_required', requestId, { detail: `This operation needs the ${op.scope} scope.`, extra: { requiredScope: op.scope } }));
    }
    const group = limiter.groupFor(k.id, k.kind, k.kind === 'publishable' ? clientAddress(c.req, c.server) : '');
    const limit = limiter.peek(group, auth.hash);
    if (limit !== undefined) return afterLimit(c, auth, op, limit);
    return limiter.check(auth.hash, group).then((l) => afterLimit(c, auth, op, l));
  }

  function afterLimit(c: Ctx, auth: { key: KeyRecord; hash: string }, op: Operation, limit: LimitResult | null): Response | Promise<Response> {
    const { requestId, req } = c;
    if (limit?.revoked) {
      keys.evict(auth.hash);
      return done(c, fail('api_key_revoked', requestId, { detail: authDetail('api_key_revoked', surface) }));
    }
    const rl = limit?.headers;
    if (limit && !limit.allowed) {
      return done(c, fail('rate_limited', requestId, { detail: 'Too many requests; slow down.', headers: { 'retry-after': String(limit.retryAfter) } }), rl);
    }
    const length = Number(req.headers.get('content-length') ?? 0);
    if (length > MAX_BODY_BYTES) return done(c, fail('payload_too_large', requestId, tooLarge().options), rl);

    const k = auth.key;
    const caller: Caller = { studioId: k.studioId, keyId: k.id, scopes: k.scopes, operationId: op.id, requestId };
    if (sfCache?.enabled) {
      // the cache's answers already carry the surface's fixed headers (CORS_HEADERS)
      const extra = rl ? { [REQUEST_ID]: requestId, ...rl } : { [REQUEST_ID]: requestId };
      const hit = sfCache.lookup(k.studioId, StorefrontCache.keyOf(c.pathAndQuery), req.headers.get('if-none-match'), req.headers.get('accept-encoding'), extra);
      if (hit) return done(c, hit, null);
      return viaCache(sfCache, req, c.pathAndQuery, caller, extra).then((res) => done(c, res, null), (err) => upstreamFailure(c, err, rl));
    }
    return forward(req, c.pathAndQuery, caller, forwardOptions).then(async (res) => {
      // a Management write shows on the Storefront at once: every gateway drops the studio's cached answers
      if (surface === 'management' && c.method !== 'GET' && res.status >= 200 && res.status < 300) await deps.storefrontCache?.changed(k.studioId);
      return done(c, res, rl);
    }, (err) => upstreamFailure(c, err, rl));
  }

  function upstreamFailure(c: Ctx, err: unknown, rl?: Record<string, string>): Response {
    if (err instanceof AppError) return done(c, fail(err.code, c.requestId, err.options), rl); // the caller's body, not the upstream
    if (err instanceof UpstreamError && err.kind === 'timeout') {
      return done(c, fail('upstream_timeout', c.requestId, { detail: `The ${surface} service did not answer in time.` }), rl);
    }
    log('warn', 'upstream unavailable', { requestId: c.requestId, surface, error: String(err) });
    return done(c, fail('service_unavailable', c.requestId, { detail: `The ${surface} service is unavailable; retry shortly.` }), rl);
  }

  return function handle(req: Request, server: Server): Response | Promise<Response> {
    const started = performance.now();
    const requestId = newRequestId();
    const [path, pathAndQuery] = pathAndQueryOf(req.url);
    const method = req.method;

    // the surface's front door leads a person (or a curl -L) to its reference
    if ((path === '/' || path === '/v1' || path === '/v1/') && (method === 'GET' || method === 'HEAD')) {
      return decorate(new Response(null, { status: 302, headers: { location: '/docs' } }), requestId);
    }
    if (path === '/healthz' || path === '/readyz' || path === '/openapi.json' || path === '/docs' || path.startsWith('/docs/')) {
      return docs(surface, path, requestId, req).then((res) => decorate(res, requestId));
    }
    if (cors && method === 'OPTIONS') {
      return decorate(new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-methods': 'GET, OPTIONS',
          'access-control-allow-headers': 'Authorization, Content-Type, If-None-Match',
          'access-control-max-age': '600',
        },
      }), requestId);
    }

    // the key is checked even for an unknown route, so the call still lands in the studio's activity log
    const route = match(method, path);
    const c: Ctx = { req, server, started, requestId, method, path, pathAndQuery, op: route && 'op' in route ? route.op : null };
    const parsed = parseAuthorization(req.headers.get('authorization'));
    if ('problem' in parsed) return afterAuth(c, route, parsed);
    const known = keys.peek(parsed.hash);
    if (known !== undefined) return afterAuth(c, route, judge(known, parsed.hash));
    return keys.resolve(parsed.hash).then(
      (rec) => afterAuth(c, route, judge(rec, parsed.hash)),
      (err) => {
        log('error', 'key lookup failed', { requestId, error: String(err) });
        return decorate(fail('service_unavailable', requestId, { detail: 'Key verification is unavailable; retry shortly.' }), requestId);
      },
    );
  };
}

function authDetail(code: ProblemCode, surface: Surface): string {
  const expected = surface === 'storefront' ? 'a publishable key (svc_pk_…)' : 'a secret key (svc_sk_…)';
  switch (code) {
    case 'api_key_missing': return `Send Authorization: Bearer <key> with ${expected}.`;
    case 'api_key_invalid': return 'The key is malformed or unknown.';
    case 'api_key_revoked': return 'The key has been revoked.';
    case 'api_key_expired': return 'The key has expired (a rolled key\'s old text stops at its expiresAt); use its replacement.';
    case 'api_key_wrong_kind': return `This surface needs ${expected}.`;
    default: return '';
  }
}
