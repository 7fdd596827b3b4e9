import { REQUEST_ID } from '@studio/shared';
import { outcomeOf, type ActivityWriter } from '../activity/writer';
import { setHeaders, type Ctx } from './context';
import { CORS_HEADERS, type SurfaceProfile } from './profile';

/**
 * Step 7, last: every answer gets the surface's headers (request id, CORS on the
 * Storefront, the rate-limit fields once known), and every call whose key resolved
 * to a studio leaves an activity entry, whatever its outcome. The entry is encoded
 * and written in batches off the request path (ActivityWriter).
 */
export function recordStep(p: SurfaceProfile, activity: ActivityWriter) {
  /** The headers of this request's answer. */
  function answerHeaders(c: Ctx): Record<string, string> {
    const base = p.cors ? { [REQUEST_ID]: c.requestId, ...CORS_HEADERS } : { [REQUEST_ID]: c.requestId };
    return c.limitHeaders ? { ...base, ...c.limitHeaders } : base;
  }

  function record(c: Ctx, res: Response, headersBuiltIn = false): Response {
    const key = c.key;
    if (key) {
      activity.record({
        studioId: key.studioId, keyId: key.id, operationId: c.op?.id ?? null, method: c.method, path: c.path,
        status: res.status, outcome: outcomeOf(res.status), durationMs: Math.round((performance.now() - c.started) * 100) / 100,
        requestId: c.requestId, at: Date.now(),
      });
    }
    return headersBuiltIn ? res : setHeaders(res, answerHeaders(c));
  }
  return { record, answerHeaders };
}
