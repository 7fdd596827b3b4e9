import { MALFORMED_DETAIL } from '@studio/shared';
import type { Answer } from '../answer';
import type { DocsHandler } from '../docs';
import { type Ctx, refuse } from './context';
import type { SurfaceProfile } from './profile';

const PREFLIGHT = {
  'access-control-allow-methods': 'GET, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type, If-None-Match, traceparent, tracestate',
  'access-control-max-age': '600',
};

const isDocsPath = (path: string) =>
  path === '/healthz' ||
  path === '/readyz' ||
  path === '/openapi.json' ||
  path === '/docs' ||
  path.startsWith('/docs/');

/**
 * Step 1, the front door: what a surface answers without a key (a malformed Host or
 * target, its reference, health, CORS preflights). null: the request is an API call, for the steps after.
 * Answers come back undecorated; the pipeline adds the surface's headers.
 */
export function frontDoor(p: SurfaceProfile, docs: DocsHandler) {
  return function front(c: Ctx): Answer | Promise<Answer> | null {
    const { path, method } = c;
    if (c.malformed) return refuse(p, c, 'malformed_request', { detail: MALFORMED_DETAIL });
    // a person (or a curl -L) at the surface's root is led to its reference
    if ((path === '/' || path === '/v1' || path === '/v1/') && (method === 'GET' || method === 'HEAD')) {
      return new Response(null, { status: 302, headers: { location: '/docs' } });
    }
    if (isDocsPath(path)) return docs(p.surface, path, c.requestId, c.req);
    if (p.cors && method === 'OPTIONS') return new Response(null, { status: 204, headers: PREFLIGHT });
    return null;
  };
}
