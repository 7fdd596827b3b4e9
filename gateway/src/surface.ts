import {
  hashKey, log, newRequestId, parseKey, problemResponse, REQUEST_ID,
  type Caller, type Config, type Operation, type ProblemCode, type ProblemOptions, type Surface,
} from '@studio/shared';
import { compileRouter } from './forward/router';
import { forward, UpstreamError } from './forward/proxy';
import type { KeyRecord, KeyResolver } from './keys/resolver';
import type { RateLimiter } from './forward/ratelimit';
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
const CORS_EXPOSE = 'X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, ETag, Location, Idempotent-Replayed';

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

  async function authenticate(header: string | null): Promise<Auth> {
    if (!header) return { problem: 'api_key_missing' };
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!m) return { problem: 'api_key_invalid' };
    const text = m[1]!;
    if (!parseKey(text)) return { problem: 'api_key_invalid' };
    const hash = hashKey(text);
    const key = await keys.resolve(hash);
    if (!key) return { problem: 'api_key_invalid' };
    if (key.revoked) return { problem: 'api_key_revoked', key };
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

  function decorate(res: Response, requestId: string, extra?: Record<string, string>): Response {
    const h = res.headers;
    h.set(REQUEST_ID, requestId);
    if (extra) for (const k in extra) h.set(k, extra[k]!);
    if (cors) {
      h.set('access-control-allow-origin', '*');
      h.set('access-control-expose-headers', CORS_EXPOSE);
      h.append('vary', 'Origin');
    }
    return res;
  }

  const typeBase = process.env.PROBLEM_TYPE_BASE ?? `${surface === 'storefront' ? config.STOREFRONT_PUBLIC_URL : config.MANAGEMENT_PUBLIC_URL}/docs/problems#`;
  const fail = (code: ProblemCode, requestId: string, o: ProblemOptions = {}) => problemResponse(code, requestId, { typeBase, ...o });
  const forwardOptions = { upstream, secret: config.GATEWAY_SECRET, timeoutMs: config.UPSTREAM_TIMEOUT_MS };
  const sfCache = surface === 'storefront' ? deps.storefrontCache : undefined;

  /** Storefront GET through the cache; a miss asks upstream for the full answer so it can be kept. */
  async function viaCache(cache: StorefrontCache, req: Request, pathAndQuery: string, caller: Caller): Promise<Response> {
    const key = StorefrontCache.keyOf(pathAndQuery);
    const conditional = req.headers.get('if-none-match');
    const acceptEncoding = req.headers.get('accept-encoding');
    const hit = cache.lookup(caller.studioId, key, conditional, acceptEncoding);
    if (hit) return hit;
    const token = cache.token();
    let upstreamReq = req;
    if (conditional) {
      const headers = new Headers(req.headers);
      headers.delete('if-none-match');
      upstreamReq = new Request(req.url, { method: req.method, headers });
    }
    const res = await cache.store(caller.studioId, key, token, await forward(upstreamReq, pathAndQuery, caller, forwardOptions), acceptEncoding);
    return StorefrontCache.conditional(res, conditional);
  }

  return async function handle(req: Request, server: Server): Promise<Response> {
    const started = performance.now();
    const requestId = newRequestId();
    const [path, pathAndQuery] = pathAndQueryOf(req.url);
    const method = req.method;

    if (path === '/healthz' || path === '/readyz' || path === '/openapi.json' || path === '/docs' || path.startsWith('/docs/')) {
      return decorate(await docs(surface, path, requestId), requestId);
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

    const route = match(method, path);
    const op: Operation | null = route && 'op' in route ? route.op : null;
    let auth: Auth;
    try {
      auth = await authenticate(req.headers.get('authorization'));
    } catch (err) {
      log('error', 'key lookup failed', { requestId, error: String(err) });
      return decorate(fail('service_unavailable', requestId, { detail: 'Key verification is unavailable; retry shortly.' }), requestId);
    }
    const key = auth.key;

    const done = (res: Response, extra?: Record<string, string>) => {
      if (key) {
        activity.record({
          studioId: key.studioId, keyId: key.id, operationId: op?.id ?? null, method, path,
          status: res.status, outcome: outcomeOf(res.status), durationMs: Math.round((performance.now() - started) * 100) / 100,
          requestId, at: new Date(),
        });
      }
      return decorate(res, requestId, extra);
    };

    if (!route) return done(fail('route_not_found', requestId, { detail: `No route ${path} on the ${surface} surface.` }));
    if (!op) {
      const allow = (route as { allow: string[] }).allow.join(', ');
      return done(fail('method_not_allowed', requestId, { detail: `${method} is not allowed on ${path}; allowed: ${allow}.`, headers: { allow } }));
    }
    if ('problem' in auth) return done(fail(auth.problem, requestId, { detail: authDetail(auth.problem, surface) }));
    const k = auth.key;
    if (!k.studioLive) return done(fail('studio_required', requestId, { detail: 'The key belongs to a studio that no longer exists.' }));
    if (op.scope && !k.scopes.includes(op.scope)) {
      return done(fail('scope_required', requestId, { detail: `This operation needs the ${op.scope} scope.`, extra: { requiredScope: op.scope } }));
    }

    const limit = await limiter.check(auth.hash, limiter.bucketsFor(k.id, k.kind, clientAddress(req, server)));
    if (limit?.revoked) {
      keys.evict(auth.hash);
      return done(fail('api_key_revoked', requestId, { detail: authDetail('api_key_revoked', surface) }));
    }
    const rl = limit?.headers;
    if (limit && !limit.allowed) {
      return done(fail('rate_limited', requestId, { detail: 'Too many requests; slow down.', headers: { 'retry-after': String(limit.retryAfter) } }), rl);
    }
    const length = Number(req.headers.get('content-length') ?? 0);
    if (length > 1024 * 1024) return done(fail('payload_too_large', requestId, { detail: 'Request bodies are limited to 1 MiB.' }), rl);

    const caller: Caller = { studioId: k.studioId, keyId: k.id, scopes: k.scopes, operationId: op.id, requestId };
    try {
      if (sfCache?.enabled) return done(await viaCache(sfCache, req, pathAndQuery, caller), rl);
      const res = await forward(req, pathAndQuery, caller, forwardOptions);
      // a Management write shows on the Storefront at once: every gateway drops the studio's cached answers
      if (surface === 'management' && method !== 'GET' && res.status >= 200 && res.status < 300) await deps.storefrontCache?.changed(k.studioId);
      return done(res, rl);
    } catch (err) {
      if (err instanceof UpstreamError && err.kind === 'timeout') {
        return done(fail('upstream_timeout', requestId, { detail: `The ${surface} service did not answer in time.` }), rl);
      }
      log('warn', 'upstream unavailable', { requestId, surface, error: String(err) });
      return done(fail('service_unavailable', requestId, { detail: `The ${surface} service is unavailable; retry shortly.` }), rl);
    }
  };
}

function authDetail(code: ProblemCode, surface: Surface): string {
  const expected = surface === 'storefront' ? 'a publishable key (svc_pk_…)' : 'a secret key (svc_sk_…)';
  switch (code) {
    case 'api_key_missing': return `Send Authorization: Bearer <key> with ${expected}.`;
    case 'api_key_invalid': return 'The key is malformed or unknown.';
    case 'api_key_revoked': return 'The key has been revoked.';
    case 'api_key_wrong_kind': return `This surface needs ${expected}.`;
    default: return '';
  }
}
