import { AppError, log, type Caller, type ProblemCode } from '@studio/shared';
import { MAX_BODY_BYTES, tooLarge } from '@studio/shared/body';
import { forward, UpstreamError, type AnsweredProblem } from '../forward/proxy';
import { traceparentOf } from '@studio/shared/trace';
import { answered, refuse, setHeaders, type Ctx } from './context';
import type { SurfaceProfile } from './profile';

/** Who is calling, as the service is told it (signed). */
export const callerOf = (c: Ctx): Caller => ({
  studioId: c.key!.studioId, keyId: c.key!.id, scopes: c.key!.scopes, operationId: c.op!.id, requestId: c.requestId,
});

/** A declared body over the limit is refused before anything is read or sent upstream. */
export function bodyTooLarge(p: SurfaceProfile, c: Ctx): Response | null {
  const length = Number(c.req.headers.get('content-length') ?? 0);
  return length > MAX_BODY_BYTES ? refuse(p, c, 'payload_too_large', tooLarge().options) : null;
}

export type UpstreamErrorCount = (labels: { surface: string; kind: 'timeout' | 'unavailable' }) => void;

/**
 * The answer when the call could not be completed: the caller's own body (an AppError: over
 * the limit, or 499 `client_closed_request` when the client left mid-upload, which is no
 * upstream error), a timeout, or the service away.
 */
export function upstreamFailure(p: SurfaceProfile, c: Ctx, err: unknown, count?: UpstreamErrorCount): Response {
  if (err instanceof AppError) return refuse(p, c, err.code, err.options);
  const kind = err instanceof UpstreamError ? err.kind : 'unavailable';
  count?.({ surface: p.surface, kind });
  if (kind === 'timeout') {
    return refuse(p, c, 'upstream_timeout', { detail: `The ${p.surface} service did not answer in time.` });
  }
  log('warn', 'upstream unavailable', { requestId: c.requestId, surface: p.surface, error: String(err) });
  return refuse(p, c, 'service_unavailable', { detail: `The ${p.surface} service is unavailable; retry shortly.` });
}

/**
 * Step 6b: the signed call to the surface's service. A successful write that can
 * change what the Storefront shows drops the studio's cached answers on every
 * gateway before the caller hears back, so the caller's next read sees it.
 */
export function forwardStep(p: SurfaceProfile, count?: UpstreamErrorCount) {
  const invalidates = p.invalidates;
  /** `headers`: the answer's own headers from the gateway (request id, CORS, rate limit), built in. */
  return function forwardCall(c: Ctx, headers: Record<string, string>): Promise<Response> {
    const call = { pathAndQuery: c.pathAndQuery, caller: callerOf(c), traceparent: traceparentOf(c.trace), answerHeaders: headers, onProblem: (a: AnsweredProblem) => answered(c, a) };
    return forward(c.req, call, p.forward).then(async (res) => {
      if (invalidates && c.method !== 'GET' && res.ok) await invalidates.changed(c.key!.studioId);
      return res;
    }, (err) => setHeaders(upstreamFailure(p, c, err, count), headers));
  };
}
