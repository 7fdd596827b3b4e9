import { AppError, type Caller, IDEMPOTENCY_KEY, MAX_BODY_BYTES, readBody, signedHeaders } from '@studio/shared';
import { HeldAnswer } from '../answer';
import { type Answer, type Pool, rethrow, UpstreamError } from './http1';

/**
 * The caller's headers a service is given: the ones the services read (a write's `Content-Type` and `Idempotency-Key`,
 * a read's `If-None-Match`), `Accept`, and a `tracestate` that belongs to the trace passed on. Nothing else crosses:
 * not the key, cookies, the caller's framing or its own `x-gw-*`, request id or `traceparent`; the hop sets its own.
 * So what a caller's headers weigh at the service is bounded by these few, not by the 16 KiB the gateway accepts.
 */
const FORWARD_REQUEST = new Set(['accept', 'content-type', 'if-none-match', IDEMPOTENCY_KEY, 'tracestate']);
/**
 * The most a forwarded request's target and headers may weigh: Bun's servers (the services) answer a bare 431 past
 * 16 KiB of request line and headers, so the gateway refuses first, with a problem body
 * (docs/design/hostile-callers.md). The rest of the request line, the Host (a name of up to 255 characters and its
 * port) and the Content-Length stay within the margin.
 */
export const FORWARDED_HEAD_MAX = 16 * 1024 - 512;

export { UpstreamError };

export interface ForwardOptions {
  /** Kept-alive connections to the surface's service. */
  pool: Pool;
  secret: string;
  timeoutMs: number;
  /** How long the caller's body may take to arrive whole (REQUEST_BODY_TIMEOUT_MS); then 408, the connection closed. */
  bodyTimeoutMs: number;
}

/** The caller's headers the service is given (FORWARD_REQUEST), as header lines, then the signed ones and the trace. */
function headerBlock(req: Request, signed: Record<string, string>, call: Call): string {
  let block = '';
  const { traceparent, traceRestarted } = call;
  req.headers.forEach((v, k) => {
    // a tracestate belongs to the traceparent it came with: when that one was refused and the trace started anew, it goes too (W3C)
    if (FORWARD_REQUEST.has(k) && !(traceRestarted && k === 'tracestate')) block += `${k}: ${v}\r\n`;
  });
  for (const k in signed) block += `${k}: ${signed[k]}\r\n`;
  if (traceparent) block += `traceparent: ${traceparent}\r\n`;
  return block;
}

/** What the gateway adds to a request it forwards, and wants to know of the answer. */
export interface Call {
  pathAndQuery: string;
  caller: Caller;
  /** This hop's span, as the service's parent (the caller's own `traceparent` is never passed on). */
  traceparent?: string;
  /** The trace was started here (no valid `traceparent` came): the caller's `tracestate`, if any, is not passed on. */
  traceRestarted?: boolean;
  /** The gateway's own headers of the answer, in place of the service's. */
  answerHeaders?: Record<string, string>;
  /** Set by `forward` when `wantProblem` and the answer is a problem: its `code` and `detail` (for the activity log). */
  problem?: AnsweredProblem;
  wantProblem?: boolean;
}

/** What the activity log keeps of a service's problem answer. */
export interface AnsweredProblem {
  code: string;
  detail: string | null;
}

/** A problem body's code and detail (a detail without NUL characters, which Postgres's text refuses); null for any other body. */
export function problemOf(body: Uint8Array): AnsweredProblem | null {
  try {
    const p = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as {
      code?: unknown;
      detail?: unknown;
    };
    if (typeof p.code !== 'string' || !/^[a-z_]{1,64}$/.test(p.code)) return null;
    return { code: p.code, detail: typeof p.detail === 'string' ? p.detail.replaceAll('\0', '') : null };
  } catch {
    return null;
  }
}

const headersTooLarge = () =>
  new AppError('request_headers_too_large', {
    detail:
      "The request target and the headers passed on to the service (Accept, Content-Type, If-None-Match, Idempotency-Key, tracestate) are over 16 KiB with the gateway's own.",
  });

/** Reading the body failed other than by our own limit: the client went away mid-upload (499, not the service's fault). */
function clientClosed(err: unknown): never {
  if (err instanceof AppError) throw err;
  throw new AppError('client_closed_request', {
    detail: 'The client closed the connection before the request body arrived.',
  });
}

/**
 * Forward a call to a service over the pooled hop, with a hard timeout for the whole
 * answer (a service that stalls mid-body still times out). The request body is read
 * bounded, so a chunked body cannot pass the 1 MiB limit a declared length is held
 * to (413 with a problem body), nor take longer than REQUEST_BODY_TIMEOUT_MS to arrive
 * (408). A read (no body) is sent at once, without an async
 * function's frame: one promise reaction per call fewer.
 */
export function forward<T = HeldAnswer>(
  req: Request,
  call: Call,
  o: ForwardOptions,
  then: Then<T> = AS_IS as unknown as Then<T>,
): Promise<T> {
  const method = req.method;
  // a HEAD is asked upstream as the GET it stands for, so its answer carries the GET's Content-Length; Bun sends the
  // caller the headers alone (RFC 9110, section 9.3.2)
  if (method === 'GET' || method === 'HEAD') return send(req, call, o, 'GET', null, then);
  return readBody(req, MAX_BODY_BYTES, o.bodyTimeoutMs)
    .catch(clientClosed)
    .then((body) => send(req, call, o, method, body, then), then.failed);
}

/**
 * What becomes of a forwarded call's answer (`ok`: the caller's Response) or of its failure (`failed`: the caller's
 * body, a timeout, the service away), run as the answer comes in: no promise per step (`Pool.call`).
 */
export interface Then<T> {
  ok(res: HeldAnswer): T | PromiseLike<T>;
  failed(err: unknown): T | PromiseLike<T>;
}
const AS_IS: Then<HeldAnswer> = { ok: (res) => res, failed: rethrow };

function send<T>(
  req: Request,
  call: Call,
  o: ForwardOptions,
  method: string,
  body: Uint8Array | null,
  then: Then<T>,
): Promise<T> {
  const { pathAndQuery } = call;
  // the Idempotency-Key is passed on as sent (any method), so it is signed whatever the method
  const signed = signedHeaders(o.secret, method, pathAndQuery, call.caller, Date.now(), {
    body,
    idempotencyKey: req.headers.get(IDEMPOTENCY_KEY),
  });
  const head = headerBlock(req, signed, call);
  if (head.length + pathAndQuery.length > FORWARDED_HEAD_MAX)
    return Promise.resolve(headersTooLarge()).then(then.failed);
  return o.pool.call(
    method,
    pathAndQuery,
    head,
    body,
    o.timeoutMs,
    (answer) => then.ok(answerOf(answer, call)),
    then.failed,
  );
}

/**
 * The service's answer as the caller's, held until the surface makes its Response: the hop's framing
 * already left out by the parser, internal headers dropped, the gateway's own (`answerHeaders`) in place of the
 * service's where both name one.
 */
function answerOf(answer: Answer, call: Call): HeldAnswer {
  if (call.wantProblem && answer.status >= 400) call.problem = problemOf(answer.body) ?? undefined;
  return new HeldAnswer(
    answer.status,
    withoutInternal(answer.headers),
    call.answerHeaders ?? null,
    answer.body.byteLength ? answer.body : null,
  );
}

/** `headers` without the gateway's own `x-gw-*` (a service never sends one back; copied only if it does). */
function withoutInternal(headers: Record<string, string>): Record<string, string> {
  for (const k in headers) {
    if (!k.startsWith('x-gw-')) continue;
    const kept: Record<string, string> = {};
    for (const n in headers) if (!n.startsWith('x-gw-')) kept[n] = headers[n]!;
    return kept;
  }
  return headers;
}
