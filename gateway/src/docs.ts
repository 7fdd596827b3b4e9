import { PROBLEMS, newRequestId, problemResponse, signedHeaders, type Config, type Surface } from '@studio/shared';
import { pingSql, type Sql } from '@studio/shared/db';
import { pingRedis, type Redis } from '@studio/shared/redis';

export type DocsHandler = (surface: Surface, path: string, requestId: string) => Promise<Response>;

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** `/docs/problems`: every problem code, the target of each problem's `type` URI. */
export function problemsPage(): string {
  const rows = Object.entries(PROBLEMS)
    .map(([code, [status, title]]) => `<tr id="${code}"><td><code>${code}</code></td><td>${status}</td><td>${escape(title)}</td></tr>`)
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Studio API problem codes</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem}
td{padding:.25rem .75rem;border-bottom:1px solid #ddd}tr:target{background:#fff3c4}</style></head><body>
<h1>Problem codes</h1><p>Every error is <code>application/problem+json</code>. Branch on <code>status</code> and <code>code</code>.</p>
<table><thead><tr><th>code</th><th>status</th><th>title</th></tr></thead><tbody>${rows}</tbody></table></body></html>`;
}

/**
 * The gateway's keyless paths: its own health, and each surface's OpenAPI document
 * and docs page, fetched from the service that owns the routes (so they cannot drift).
 */
export function createDocsHandler(config: Config, sql: Sql, redis: Redis | null): DocsHandler {
  const cache = new Map<string, { body: ArrayBuffer; type: string }>();
  const page = problemsPage();
  return async (surface, path, requestId) => {
    if (path === '/healthz') return Response.json({ status: 'ok' });
    if (path === '/readyz') {
      const checks = { postgres: await pingSql(sql), redis: redis ? await pingRedis(redis) : false };
      return Response.json({ status: checks.postgres ? 'ok' : 'unavailable', checks }, { status: checks.postgres ? 200 : 503 });
    }
    if (path === '/docs/problems') return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    if (path !== '/openapi.json' && path !== '/docs') return problemResponse('route_not_found', requestId);
    const id = `${surface}${path}`;
    let hit = cache.get(id);
    if (!hit) {
      const upstream = surface === 'storefront' ? config.STOREFRONT_SERVICE_URL : config.MANAGEMENT_SERVICE_URL;
      const caller = { studioId: '', keyId: '', scopes: [], operationId: 'docs', requestId: requestId || newRequestId() };
      try {
        const res = await fetch(upstream + path, { headers: signedHeaders(config.GATEWAY_SECRET, 'GET', path, caller), signal: AbortSignal.timeout(5_000) });
        if (!res.ok) return problemResponse('service_unavailable', requestId, { detail: `The ${surface} service has no ${path}.` });
        hit = { body: await res.arrayBuffer(), type: res.headers.get('content-type') ?? 'application/json' };
        cache.set(id, hit);
      } catch {
        return problemResponse('service_unavailable', requestId, { detail: `The ${surface} service is unavailable.` });
      }
    }
    return new Response(hit.body, { headers: { 'content-type': hit.type, 'cache-control': 'public, max-age=300' } });
  };
}
