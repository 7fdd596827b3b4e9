/** The problem+json renderer of docs/design/errors.md; the body's shape is the one `Problem` schema. */

import { newRequestId } from './http';
import { MAX_ERRORS_SOUGHT, MAX_PROBLEM_ERRORS, PROBLEMS, type ProblemCode, statusOf } from './problem-codes';
import type { Problem } from './schemas/problem';

export * from './problem-codes';

/** One entry of a 422's `errors`: a JSON Pointer into the request (`/body/startsAt`, `/query/limit`) and why. */
export type FieldError = NonNullable<Problem['errors']>[number];

export interface ProblemOptions {
  detail?: string;
  errors?: FieldError[];
  /** Extension members, e.g. `requiredScope`. */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Base of `type` (`problemTypeBase` of the config); without one, `type` is about:blank. */
  typeBase?: string;
}

/** Thrown by services; rendered by the one error handler. */
export class AppError extends Error {
  constructor(
    readonly code: ProblemCode,
    readonly options: ProblemOptions = {},
  ) {
    super(options.detail ?? PROBLEMS[code][1]);
    this.name = 'AppError';
  }
  get status() {
    return statusOf(this.code);
  }
}

export const problem = (code: ProblemCode, detail?: string, rest: Omit<ProblemOptions, 'detail'> = {}) =>
  new AppError(code, { ...rest, detail });

/**
 * docs/design/hostile-callers.md: what a problem may carry of the caller's input, so that no answer (and no
 * stored idempotent answer) grows with what was sent. A detail quotes at most 100 characters
 * of input (`quote`); `errors` keeps 20 entries, then one saying how many more; each path
 * segment is cut to 64 characters (an unknown key can be as long as the body).
 */
export const MAX_QUOTED = 100;
const MAX_SEGMENT = 64;
/** A safety net for details that quote input without `quote`: never more than this. */
const MAX_DETAIL = 1000;

/** At most 100 characters of a caller's value, for a detail. */
export const quote = (value: unknown): string => {
  const s = String(value);
  return s.length <= MAX_QUOTED ? s : `${s.slice(0, MAX_QUOTED)}…`;
};

const cutSegments = (path: string) =>
  path
    .split('/')
    .map((seg) => (seg.length <= MAX_SEGMENT ? seg : `${seg.slice(0, MAX_SEGMENT)}…`))
    .join('/');

/** `errors` as a problem carries them: at most 20 (then one entry naming how many more), paths cut per segment. */
export function boundedErrors(errors: FieldError[]): FieldError[] {
  const kept = errors.slice(0, MAX_PROBLEM_ERRORS).map((e) => ({ path: cutSegments(e.path), message: e.message }));
  const more = errors.length - kept.length;
  if (more > 0) {
    // the common first segment of the rest (`/body`, `/query`) says where they are
    const part = errors[MAX_PROBLEM_ERRORS]!.path.split('/')[1] ?? '';
    kept.push({
      path: cutSegments(`/${part}`),
      message: `and ${errors.length === MAX_ERRORS_SOUGHT ? 'at least ' : ''}${more} more error${more === 1 ? '' : 's'} not listed; fix these and send again`,
    });
  }
  return kept;
}

export function problemBody(code: ProblemCode, requestId: string | undefined, o: ProblemOptions = {}): Problem {
  const [status, title] = PROBLEMS[code];
  const base = o.typeBase;
  const detail = o.detail ?? title;
  const body: Problem = {
    type: base ? `${base}${code}` : 'about:blank',
    title,
    status,
    detail: detail.length <= MAX_DETAIL ? detail : `${detail.slice(0, MAX_DETAIL)}…`,
    code,
  };
  if (requestId) body.instance = `urn:request:${requestId}`;
  if (o.errors) body.errors = boundedErrors(o.errors);
  return o.extra ? { ...body, ...o.extra } : body;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * A problem answer. Every one carries `instance` and `X-Request-Id` (docs/design/errors.md): a request that reached
 * no step that gives it an id (an unsigned call to a service, a malformed Host, a handler's crash) gets one here.
 */
export function problemResponse(code: ProblemCode, requestId: string | undefined, o: ProblemOptions = {}): Response {
  const id = requestId || newRequestId();
  const body = problemBody(code, id, o);
  return new Response(JSON.stringify(body), { status: body.status, headers: problemHeaders(id, o) });
}

/** A problem answer's headers: its media type and request id, then the problem's own (`Retry-After`, `Allow`…). */
export const problemHeaders = (requestId: string, o: ProblemOptions = {}): Record<string, string> => ({
  'content-type': PROBLEM_CONTENT_TYPE,
  'x-request-id': requestId,
  ...o.headers,
});

/** Named factories of the problems services throw, so each answer is worded in one place. */
export const problems = {
  /** 404: no such record in the caller's studio (another studio's id reads the same). */
  notFound: (what: string, id?: string) =>
    new AppError('not_found', {
      detail: id ? `No ${what} ${quote(id)} in this studio.` : `No such ${what} in this studio.`,
    }),
  /**
   * 422 `validation_failed` (or another 422 code that lists its fields), with `errors`; the detail
   * counts them and never repeats them (a long list would double the answer).
   */
  invalidFields: (errors: FieldError[], code: ProblemCode = 'validation_failed', lead = 'The request is not valid') =>
    new AppError(code, {
      detail: `${lead} (${errors.length === 1 ? '1 error' : `${errors.length} errors`}); \`errors\` names each field and why.`,
      errors,
    }),
  /** 403: the key's studio was deleted (the gateway's answer; a service's too, for a call let through before the key's eviction reached it). */
  studioGone: () => new AppError('studio_required', { detail: 'The key belongs to a studio that no longer exists.' }),
  siteNotPublished: () =>
    new AppError('site_not_published', { detail: 'This studio has not published a public site.' }),
  /** 409: the instructor already teaches `conflict` at an overlapping time. */
  doubleBooked: (conflict: { id: string; classId: string; startsAt: string; endsAt: string }) =>
    new AppError('instructor_double_booked', {
      detail: `The instructor already teaches occurrence ${conflict.id} from ${conflict.startsAt} to ${conflict.endsAt}.`,
      extra: { conflictingOccurrence: conflict },
    }),
};
