import { etagMatches, etagOf, JSON_TYPE } from '@studio/shared';

/** docs/design/storefront.md: browsers and CDNs may keep a Storefront answer 30 s, then revalidate with its ETag. */
export const CACHE_CONTROL = 'public, max-age=30';

/**
 * A Storefront 200 with its strong ETag, or 304 when `If-None-Match` already names it.
 * `Vary: Authorization` because the same URL answers differently per studio key, so a
 * shared cache must never hand one studio's answer to another; `Origin` because a key
 * restricted to its sites gets its caller's origin back in Access-Control-Allow-Origin.
 */
export function cacheable(request: Request, body: unknown): Response {
  const text = JSON.stringify(body);
  const etag = etagOf(text);
  const headers = { etag, 'cache-control': CACHE_CONTROL, vary: 'Authorization, Origin' };
  if (etagMatches(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers });
  return new Response(text, { status: 200, headers: { ...headers, 'content-type': JSON_TYPE } });
}
