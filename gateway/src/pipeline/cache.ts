import { JSON_TYPE, log, operationsOf, traceparentOf } from '@studio/shared';
import type { Answer } from '../answer';
import { type Loader, StorefrontCache } from '../cache/storefront';
import { forward } from '../forward/proxy';
import {
  answered,
  type Ctx,
  countUpstreamError,
  setHeaders,
  signedCallerOf,
  type UpstreamErrorCount,
  upstreamFailure,
} from './context';
import type { SurfaceProfile } from './profile';

/** What a fill asks the service with: JSON (and, to revalidate an entry, its ETag). */
const askFor = (url: string, etag: string | null) =>
  new Request(url, { headers: etag ? { accept: JSON_TYPE, 'if-none-match': etag } : { accept: JSON_TYPE } });

/**
 * Step 6a: a Storefront read answered from the gateway's cache: at once when fresh
 * (synchronously); an expired entry while one refresh runs; else one shared
 * upstream call for every concurrent miss. null: the cache is off (its broadcasts
 * may have been missed), so the call is forwarded as it is.
 *
 * Its answers are built with every header of the answer in one go (`headers`):
 * cheaper than setting them on each Response afterwards.
 */
export function cacheStep(p: SurfaceProfile, cache: StorefrontCache, count?: UpstreamErrorCount) {
  /** Each operation's declared query parameters (its registry row's query schema), the only ones an entry is keyed on. */
  const declared = new Map<string, ReadonlySet<string>>();
  for (const op of operationsOf(p.surface))
    declared.set(op.id, new Set(op.query ? Object.keys(op.query.properties) : []));

  return function cached(c: Ctx, headers: Record<string, string>): Answer | Promise<Answer> | null {
    if (!cache.enabled) return null;
    const studioId = c.key!.studioId;
    const key = StorefrontCache.keyOf(c.pathAndQuery, declared.get(c.op!.id));
    const conditional = c.req.headers.get('if-none-match');
    const acceptEncoding = c.req.headers.get('accept-encoding');
    const hit = cache.lookup(studioId, key, conditional, acceptEncoding, headers);
    if (hit) return hit;
    const stale = cache.stale(studioId, key, conditional, acceptEncoding, headers);
    if (stale) {
      cache
        .refresh(studioId, key, () => loader(c))
        ?.catch((err) => log('warn', 'storefront cache refresh failed', { error: String(err) }));
      return stale;
    }
    return cache
      .fill(studioId, key, conditional, acceptEncoding, loader(c), headers, (a) => answered(c, a))
      .catch((err) => setHeaders(upstreamFailure(p, c, err), headers));
  };

  /**
   * The upstream call of a fill, made of what it needs of the request, not the request: a refresh may outlive its
   * answer by seconds, and nothing of the request that started it need wait with it.
   */
  function loader(c: Ctx): Loader {
    const url = c.req.url;
    // the client's own validators stay here: upstream is asked for the full answer, or to confirm the kept one
    const call = { pathAndQuery: c.pathAndQuery, caller: signedCallerOf(c), traceparent: traceparentOf(c.trace) };
    // one upstream call serves every waiter of a fill: it is counted once, here, failed or not waited on (a refresh)
    return (etag) =>
      forward(askFor(url, etag), call, p.forward).catch((err) => {
        countUpstreamError(p, err, count);
        throw err;
      });
  }
}
