import {
  AppError,
  type Caller,
  log,
  newRequestId,
  type Operation,
  type ProblemCode,
  type ProblemOptions,
  problemBody,
  problemHeaders,
  requestTarget,
  startTrace,
  TRACEPARENT,
  type Trace,
  type TraceStarter,
} from '@studio/shared';
import { type Answer, HeldAnswer } from '../answer';
import { type AnsweredProblem, UpstreamError } from '../forward/proxy';
import type { KeyRecord } from '../keys/resolver';
import type { LimitResult } from '../limits/rate-limiter';
import type { SurfaceProfile } from './profile';

/**
 * What the steps share: the request context they fill in, the types one step hands the next,
 * and the answers several of them give. No step imports another; they meet here.
 */

/** Where the pipeline finds the caller's address: Bun.serve's server (a test's stand-in has only this). */
export interface Server {
  requestIP(req: Request): { address: string } | null;
}

/** The route step's finding: an operation, the methods a known path allows, or no such path. */
export type RouteMatch = { op: Operation } | { allow: string[] } | null;

export type KeyProblem =
  | 'api_key_missing'
  | 'api_key_invalid'
  | 'api_key_revoked'
  | 'api_key_expired'
  | 'api_key_wrong_kind';
/** What the Authorization header led to: a record (null: no such key), or why it could not be looked up. */
export type KeyLookup = { rec: KeyRecord | null } | { problem: 'api_key_missing' | 'api_key_invalid' };
/** A lookup, or the caller's address over its limit of unknown keys (429, nothing looked up). */
export type KeyStepResult = KeyLookup | { limited: LimitResult };

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
export const trustedProxySet = (list: string): ReadonlySet<string> =>
  new Set(
    list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

/** X-Forwarded-For entries looked at, from the right: more hops than this are not a real chain of proxies. */
const FORWARDED_HOPS_MAX = 16;

/**
 * Who sent the request through a chain of trusted proxies: X-Forwarded-For read from the right (each proxy appends
 * the address it received from), skipping trusted proxies; the first address that is not one is the caller. The
 * entries to its left were written by the caller and prove nothing (reading the leftmost let anyone pick its
 * address behind a proxy, and so its per-visitor and unknown-key limits). All trusted: the leftmost.
 */
function forwardedClient(header: string, trusted: ReadonlySet<string>): string | undefined {
  const hops = header.split(',');
  let last: string | undefined;
  for (let i = hops.length - 1; i >= 0 && i >= hops.length - FORWARDED_HOPS_MAX; i--) {
    const hop = hopAddress(hops[i]!.trim());
    if (!hop) continue;
    if (!trusted.has(hop)) return hop;
    last = hop;
  }
  return last;
}

/**
 * A hop as its address alone: a proxy that appends the caller's port too (`203.0.113.7:50001`, `[2001:db8::1]:443`)
 * would otherwise name one caller differently on every connection, and each would be a fresh per-visitor limit.
 */
export function hopAddress(hop: string): string {
  if (hop.startsWith('[')) {
    const end = hop.indexOf(']');
    return end > 0 ? hop.slice(1, end) : hop;
  }
  const colon = hop.indexOf(':');
  // one colon: an IPv4 address and its port; more: an IPv6 address as it is
  return colon > 0 && colon === hop.lastIndexOf(':') ? hop.slice(0, colon) : hop;
}

/** The caller's address: the peer's, or, when the peer is a trusted proxy, the one its X-Forwarded-For names. Read once per request. */
export function clientAddressOf(c: Ctx, trusted: ReadonlySet<string>): string {
  if (c.client !== undefined) return c.client;
  const peer = c.server.requestIP(c.req)?.address ?? 'unknown';
  const header = trusted.has(peer) ? c.req.headers.get('x-forwarded-for') : null;
  return (c.client = (header && forwardedClient(header, trusted)) || peer);
}

export function newCtx(req: Request, server: Server, begin: TraceStarter = startTrace): Ctx {
  const { path, pathAndQuery, valid } = requestTarget(req.url);
  const at = Date.now();
  return {
    req,
    server,
    started: performance.now(),
    at,
    requestId: newRequestId(at),
    method: req.method,
    path,
    pathAndQuery,
    malformed: !valid,
    trace: begin(req.headers.get(TRACEPARENT), at),
    route: null,
    op: null,
  };
}

/**
 * A refusal: the problem answer of this surface, its code kept on the context for the activity log, held until the
 * surface makes its Response (the record step adds its headers to the held parts, not to a Response's Headers).
 */
export function refuse(p: SurfaceProfile, c: Ctx, code: ProblemCode, options: ProblemOptions = {}): HeldAnswer {
  c.problem = code;
  if (options.detail) c.problemDetail = options.detail;
  const body = problemBody(code, c.requestId, { typeBase: p.typeBase, ...options });
  return new HeldAnswer(body.status, problemHeaders(c.requestId, options), null, Buffer.from(JSON.stringify(body)));
}

/** A service's problem answer, passed on: its code and detail kept on the context for the activity log. */
export function answered(c: Ctx, a: AnsweredProblem) {
  c.problem = a.code as ProblemCode;
  if (a.detail) c.problemDetail = a.detail;
}

export function setHeaders<A extends Answer>(res: A, headers: Record<string, string>): A {
  if (res instanceof HeldAnswer)
    return new HeldAnswer(res.status, res.own, { ...res.extra, ...headers }, res.body) as A;
  for (const k in headers) res.headers.set(k, headers[k]!);
  return res;
}

/** What a refusal of the key says (the authorize step; the limit step when Redis knows the key was revoked). */
export function keyDetail(code: KeyProblem, p: SurfaceProfile): string {
  switch (code) {
    case 'api_key_missing':
      return `Send Authorization: Bearer <key> with ${p.expectedKey}.`;
    case 'api_key_invalid':
      return 'The key is malformed or unknown.';
    case 'api_key_revoked':
      return 'The key has been revoked.';
    case 'api_key_expired':
      return "The key has expired (a rolled key's old text stops at its expiresAt); use its replacement.";
    case 'api_key_wrong_kind':
      return `This surface needs ${p.expectedKey}.`;
  }
}

/** Who is calling, as the service is told it (signed); the service reads it back with `callerOf`. */
export const signedCallerOf = (c: Ctx): Caller => ({
  studioId: c.key!.studioId,
  keyId: c.key!.id,
  scopes: c.key!.scopes,
  operationId: c.op!.id,
  requestId: c.requestId,
});

export type UpstreamErrorCount = (labels: { surface: string; kind: 'timeout' | 'unavailable' }) => void;

/** Counts one failed call to a service (never the caller's own body: an AppError), and says which kind it was. */
export function countUpstreamError(p: SurfaceProfile, err: unknown, count?: UpstreamErrorCount) {
  const kind = err instanceof UpstreamError ? err.kind : 'unavailable';
  if (!(err instanceof AppError)) count?.({ surface: p.surface, kind });
  return kind;
}

/**
 * The answer when the call could not be completed (the cache and forward steps): the caller's
 * own body (an AppError: over the limit, or 499 `client_closed_request` when the client left
 * mid-upload, which is no upstream error), a timeout, or the service away.
 */
export function upstreamFailure(p: SurfaceProfile, c: Ctx, err: unknown, count?: UpstreamErrorCount): HeldAnswer {
  if (err instanceof AppError) return refuse(p, c, err.code, err.options);
  const kind = countUpstreamError(p, err, count);
  if (kind === 'timeout') {
    return refuse(p, c, 'upstream_timeout', { detail: `The ${p.surface} service did not answer in time.` });
  }
  log('warn', 'upstream unavailable', { requestId: c.requestId, surface: p.surface, error: String(err) });
  return refuse(p, c, 'service_unavailable', { detail: `The ${p.surface} service is unavailable; retry shortly.` });
}
