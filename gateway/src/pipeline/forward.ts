import { MAX_BODY_BYTES, tooLarge, traceparentOf } from '@studio/shared';
import type { Answer, HeldAnswer } from '../answer';
import { type Call, forward } from '../forward/proxy';
import {
  answered,
  type Ctx,
  refuse,
  setHeaders,
  signedCallerOf,
  type UpstreamErrorCount,
  upstreamFailure,
} from './context';
import type { SurfaceProfile } from './profile';

/** A declared body over the limit is refused before anything is read or sent upstream. */
export function bodyTooLarge(p: SurfaceProfile, c: Ctx): HeldAnswer | null {
  const length = Number(c.req.headers.get('content-length') ?? 0);
  return length > MAX_BODY_BYTES ? refuse(p, c, 'payload_too_large', tooLarge().options) : null;
}

const asIs = (_c: Ctx, res: Answer) => res;

/**
 * Step 6b: the signed call to the surface's service. A successful write that can
 * change what the Storefront shows (`changesStorefront` on its registry row) drops the
 * studio's cached answers on every gateway before the caller hears back, so the
 * caller's next read sees it. `finish` (the record step) runs in the socket's callback
 * that completes the answer (`Pool.call`): one promise per call, not one per step.
 */
export function forwardStep(
  p: SurfaceProfile,
  count?: UpstreamErrorCount,
  finish: (c: Ctx, res: Answer) => Answer = asIs,
) {
  const invalidates = p.invalidates;
  /** `headers`: the answer's own headers from the gateway (request id, CORS, rate limit), built in. */
  return function forwardCall(c: Ctx, headers: Record<string, string>): Promise<Answer> {
    const call: Call = {
      pathAndQuery: c.pathAndQuery,
      caller: signedCallerOf(c),
      traceparent: traceparentOf(c.trace),
      traceRestarted: c.trace.parentId === null,
      answerHeaders: headers,
      wantProblem: true,
    };
    return forward(c.req, call, p.forward, {
      ok(res) {
        if (call.problem) answered(c, call.problem);
        if (invalidates && c.op!.changesStorefront && res.ok)
          return invalidates.changed(c.key!.studioId).then(() => finish(c, res));
        return finish(c, res);
      },
      failed: (err) => finish(c, setHeaders(upstreamFailure(p, c, err, count), headers)),
    });
  };
}
