import { newRequestId, problemResponse, type Operation, type ProblemCode, type ProblemOptions } from '@studio/shared';
import { startTrace, TRACEPARENT, type Trace } from '@studio/shared/trace';
import { requestTarget } from '@studio/shared/target';
import type { AnsweredProblem } from '../forward/proxy';
import type { RouteMatch } from '../forward/router';
import type { KeyRecord } from '../keys/resolver';
import type { SurfaceProfile } from './profile';

export type Server = { requestIP(req: Request): { address: string } | null };

/** One request's facts, filled in by the steps as it goes through the pipeline. */
export interface Ctx {
  readonly req: Request;
  readonly server: Server;
  readonly started: number;
  /** When the request arrived, ms since the epoch: its activity entry's `at`, also written into its request id. */
  readonly at: number;
  readonly requestId: string;
  readonly method: string;
  /** Path without the query, and path with it (as sent upstream). */
  readonly path: string;
  readonly pathAndQuery: string;
  /** The Host (or target) is malformed: the front door answers 400 `malformed_request`. */
  readonly malformed: boolean;
  /** W3C trace: the caller's continued, or one started here; this gateway hop is its span. */
  readonly trace: Trace;
  route: RouteMatch;
  op: Operation | null;
  /** The key's record once it resolved (a refused key too: its studio still sees the call). */
  key?: KeyRecord;
  /** SHA-256 of the key text (the limiter's and resolver's handle). */
  hash?: string;
  /** RateLimit / RateLimit-Policy fields for the answer. */
  limitHeaders?: Record<string, string>;
  /** The code of a refusal, kept for the activity entry. */
  problem?: ProblemCode;
  /** Its `detail`, when it says more than the code's title (a service's problem: always). */
  problemDetail?: string;
  /** The caller's address, once read (`clientAddressOf`). */
  client?: string;
}

/** The addresses of TRUSTED_PROXIES (comma-separated). */
export const trustedProxySet = (list: string): ReadonlySet<string> => new Set(list.split(',').map((s) => s.trim()).filter(Boolean));

/** The caller's address: the peer's, or the first X-Forwarded-For hop when the peer is a trusted proxy. Read once per request. */
export function clientAddressOf(c: Ctx, trusted: ReadonlySet<string>): string {
  if (c.client !== undefined) return c.client;
  const peer = c.server.requestIP(c.req)?.address ?? 'unknown';
  const forwarded = trusted.has(peer) ? c.req.headers.get('x-forwarded-for')?.split(',')[0]?.trim() : undefined;
  return (c.client = forwarded || peer);
}

export function newCtx(req: Request, server: Server): Ctx {
  const { path, pathAndQuery, valid } = requestTarget(req.url);
  const at = Date.now();
  return {
    req, server, started: performance.now(), at, requestId: newRequestId(at), method: req.method, path, pathAndQuery, malformed: !valid,
    trace: startTrace(req.headers.get(TRACEPARENT), at), route: null, op: null,
  };
}

/** A refusal: the problem answer of this surface, its code kept on the context for the activity log. */
export function refuse(p: SurfaceProfile, c: Ctx, code: ProblemCode, options: ProblemOptions = {}): Response {
  c.problem = code;
  if (options.detail) c.problemDetail = options.detail;
  return problemResponse(code, c.requestId, { typeBase: p.typeBase, ...options });
}

/** A service's problem answer, passed on: its code and detail kept on the context for the activity log. */
export function answered(c: Ctx, a: AnsweredProblem) {
  c.problem = a.code as ProblemCode;
  if (a.detail) c.problemDetail = a.detail;
}

export function setHeaders(res: Response, headers: Record<string, string>): Response {
  for (const k in headers) res.headers.set(k, headers[k]!);
  return res;
}
