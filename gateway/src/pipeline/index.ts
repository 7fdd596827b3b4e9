import { type Config, log, startTrace } from '@studio/shared';
import type { Tracing } from '@studio/shared/io';
import type { ActivityWriter } from '../activity/writer';
import { type Answer, asResponse, type HeldAnswer } from '../answer';
import type { DocsHandler } from '../docs';
import type { KeyResolver } from '../keys/resolver';
import type { RateLimiter } from '../limits/rate-limiter';
import type { GatewayMetrics } from '../metrics';
import { authorizeStep } from './authorize';
import { cacheStep } from './cache';
import { type Ctx, type KeyStepResult, newCtx, refuse, type Server, trustedProxySet } from './context';
import { bodyTooLarge, forwardStep } from './forward';
import { frontDoor } from './front';
import { keyStep } from './key';
import { limitStep } from './limit';
import type { SurfaceProfile } from './profile';
import { type RecordDeps, recordStep } from './record';
import { routeStep } from './route';

export interface PipelineDeps {
  config: Config;
  keys: KeyResolver;
  limiter: RateLimiter;
  activity: ActivityWriter;
  docs: DocsHandler;
  metrics?: GatewayMetrics;
  /** Null unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing?: Tracing | null;
  /** `paused`: a single-node gateway that lost its lock serves nothing until it holds it again (docs/design/single-node.md). */
  state?: { paused?: boolean };
}

const LOOKUP_DOWN = { detail: 'Key verification is unavailable; retry shortly.', headers: { 'retry-after': '1' } };
const PAUSED = 'The gateway is taking its lock on Postgres again (single-node mode); retry shortly.';

const then = <T, R>(v: T | Promise<T>, next: (v: T) => R | Promise<R>): R | Promise<R> =>
  v instanceof Promise ? v.then(next) : next(v);

/**
 * One gateway surface (docs/design/gateway.md) as a pipeline of named steps over one context:
 * front door -> route -> key -> authorize -> limit -> cache or forward -> record.
 * Each step answers synchronously when it can decide from memory (key record,
 * rate-limit lease, cached answer) and returns a Promise only when it must wait on
 * I/O, so the common request never yields to the event loop; `then` joins them.
 */
export function createSurface(p: SurfaceProfile, deps: PipelineDeps) {
  const front = frontDoor(p, deps.docs);
  const route = routeStep(p);
  const authorize = authorizeStep(p);
  const m = deps.metrics;
  // who may name the caller's address (X-Forwarded-For): read once, for the limiter and the activity entry alike
  const trusted = trustedProxySet(deps.config.TRUSTED_PROXIES);
  const key = keyStep(deps.keys, deps.limiter, trusted);
  const limit = limitStep(p, deps.limiter, deps.keys, trusted, m?.limitDecisions);
  const cached = p.cache ? cacheStep(p, p.cache, m?.upstreamErrors) : null;
  const { tracing } = deps;
  const { record, answerHeaders } = recordStep(p, recordDepsOf(deps, trusted));
  const begin = tracing?.start ?? startTrace; // chosen once: without tracing, plain ids and no span object
  const recorded = (c: Ctx, r: Answer) => record(c, r, true);
  const forwardCall = forwardStep(p, m?.upstreamErrors, recorded);

  function serve(c: Ctx): Answer | Promise<Answer> {
    const refused = bodyTooLarge(p, c);
    if (refused) return record(c, refused);
    const headers = answerHeaders(c);
    const hit = c.op!.perKey ? null : cached?.(c, headers); // a key's own answer is never the studio's to share
    // a forwarded call is recorded by the forward step, in the reaction that has its answer
    return hit ? then(hit, (r) => recorded(c, r)) : forwardCall(c, headers);
  }

  function afterKey(c: Ctx, found: KeyStepResult): Answer | Promise<Answer> {
    if ('limited' in found) return record(c, limit.unknownKeys(c, found.limited));
    const refused = authorize(c, found);
    // a refusal with a known key spends a token too: a flood of them turns into 429s, folded in the activity log
    if (refused) return c.key ? then(limit(c), (limited) => record(c, limited ?? refused)) : record(c, refused);
    const limited = limit(c);
    // the usual call: the limit decided from memory, so no callback is made for it
    if (!(limited instanceof Promise)) return limited ? record(c, limited) : serve(c);
    return limited.then((l) => (l ? record(c, l) : serve(c)));
  }

  /** The key store could not be asked (Postgres down): nothing is known of the caller, so nothing is recorded. */
  function lookupFailed(c: Ctx, err: unknown): HeldAnswer {
    log('error', 'key lookup failed', { requestId: c.requestId, error: String(err) });
    return record(c, refuse(p, c, 'service_unavailable', LOOKUP_DOWN));
  }

  function answer(c: Ctx): Answer | Promise<Answer> {
    const early = front(c);
    if (early) return then(early, (r) => record(c, r));
    if (deps.state?.paused) return record(c, refuse(p, c, 'service_unavailable', { detail: PAUSED }));
    route(c);
    // the key is judged even on an unknown route, so the call still lands in the studio's activity log
    const found = key(c);
    if (found instanceof Promise)
      return found.then(
        (f) => afterKey(c, f),
        (err) => lookupFailed(c, err),
      );
    return afterKey(c, found);
  }

  return fetchOf(answer, begin);
}

/**
 * Bun.serve's `fetch`: the steps hold their answer's parts, and one Response is made of them here, at the end. A
 * request that comes when this turn of the event loop has already answered for LONG_TURN_MS is answered on the
 * next turn (`longTurn`).
 */
function fetchOf(answer: (c: Ctx) => Answer | Promise<Answer>, begin: Parameters<typeof newCtx>[2]) {
  return (req: Request, server: Server): Response | Promise<Response> => {
    const c = newCtx(req, server, begin);
    if (!longTurn(c.started)) return responseOf(answer(c));
    return new Promise((resolve, reject) =>
      setImmediate(() => {
        try {
          resolve(responseOf(answer(c)));
        } catch (err) {
          reject(err); // Bun.serve's `error` answers it, as it would have
        }
      }),
    );
  };
}

/** What the record step counts and writes to, from the surface's deps. */
const recordDepsOf = (deps: PipelineDeps, trusted: ReadonlySet<string>): RecordDeps => ({
  activity: deps.activity,
  metrics: deps.metrics?.requests,
  tracing: deps.tracing,
  trusted,
  testModeCount: deps.metrics?.testModeRequests,
});

const responseOf = (a: Answer | Promise<Answer>) => (a instanceof Promise ? a.then(asResponse) : asResponse(a));

/**
 * How long one turn of the event loop answers requests before the rest wait for the next turn. Bun.serve hands our
 * `fetch` every request it read from a ready connection, one after the other, in the same turn: 50 connections
 * pipelining cached reads (single-node mode, every answer made at once) held turns of seconds, in which no timer
 * ran, `/healthz` on the operations port timed out and the activity log's flush could not reach Postgres, so 200,000
 * entries waited in memory as objects (the gateway grew by 340-390 MiB; `gateway/test/flood-process.test.ts`). A
 * request answered on the next turn is answered later but unchanged; Bun.serve closes a connection that pipelines
 * another request behind it (docs/design/serving.md, "Known limits"), as it does behind any answer not made at once.
 * Without pipelining a turn answers at most one request a connection, far below this.
 */
export const LONG_TURN_MS = 50;
/** When this turn's first request came (`performance.now()`); -1 until one does. */
let turnStarted = -1;
const endTurn = () => {
  turnStarted = -1;
};

/** Whether this turn of the event loop has been answering requests for over LONG_TURN_MS (`now`: this request's arrival). */
function longTurn(now: number): boolean {
  if (turnStarted < 0) {
    turnStarted = now;
    setImmediate(endTurn); // the next turn starts afresh
    return false;
  }
  return now - turnStarted > LONG_TURN_MS;
}
export type SurfaceHandler = ReturnType<typeof createSurface>;
