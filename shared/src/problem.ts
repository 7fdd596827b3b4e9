/** The closed problem+json vocabulary of docs/design/errors.md: one list, one status map, one renderer. */
export const PROBLEMS = {
  malformed_json: [400, 'Malformed JSON'],
  malformed_request: [400, 'Malformed request'],
  idempotency_key_required: [400, 'Idempotency-Key required'],
  idempotency_key_invalid: [400, 'Invalid Idempotency-Key'],
  invalid_cursor: [400, 'Invalid cursor'],
  api_key_missing: [401, 'API key missing'],
  api_key_invalid: [401, 'API key invalid'],
  api_key_revoked: [401, 'API key revoked'],
  api_key_wrong_kind: [401, 'Wrong kind of API key'],
  api_key_expired: [401, 'API key expired'],
  gateway_signature_invalid: [401, 'Gateway signature invalid'],
  unauthenticated: [401, 'Not signed in'],
  scope_required: [403, 'Scope required'],
  studio_required: [403, 'Studio required'],
  origin_not_allowed: [403, 'Origin not allowed'],
  csrf_failed: [403, 'Form expired'],
  not_found: [404, 'Not found'],
  route_not_found: [404, 'Route not found'],
  site_not_published: [404, 'Site not published'],
  method_not_allowed: [405, 'Method not allowed'],
  events_expired: [410, 'Events expired'],
  idempotency_key_reused: [409, 'Idempotency-Key reused'],
  idempotency_request_in_progress: [409, 'Request in progress'],
  instructor_double_booked: [409, 'Instructor double-booked'],
  member_exists: [409, 'Member exists'],
  last_admin: [409, 'Last admin'],
  last_venue: [409, 'Last venue'],
  coupon_code_taken: [409, 'Coupon code taken'],
  occurrence_cancelled: [409, 'Occurrence cancelled'],
  conflict: [409, 'Conflict'],
  payload_too_large: [413, 'Payload too large'],
  unsupported_media_type: [415, 'Unsupported media type'],
  validation_failed: [422, 'Validation failed'],
  unknown_instructor: [422, 'Unknown instructor'],
  unknown_plan: [422, 'Unknown plan'],
  unknown_location: [422, 'Unknown location'],
  unknown_room: [422, 'Unknown room'],
  unsupported_channel: [422, 'Unsupported channel'],
  occurrence_in_past: [422, 'Occurrence in the past'],
  invalid_role: [422, 'Invalid role'],
  invalid_plan_config: [422, 'Invalid plan config'],
  invalid_coupon_config: [422, 'Invalid coupon config'],
  invalid_price: [422, 'Invalid price'],
  unknown_reference: [422, 'Unknown reference'],
  rate_limited: [429, 'Rate limited'],
  client_closed_request: [499, 'Client closed request'],
  internal_error: [500, 'Internal error'],
  service_unavailable: [503, 'Service unavailable'],
  upstream_timeout: [504, 'Upstream timeout'],
} as const satisfies Record<string, readonly [number, string]>;

export type ProblemCode = keyof typeof PROBLEMS;
export const PROBLEM_CODES = Object.keys(PROBLEMS) as ProblemCode[];
export const statusOf = (code: ProblemCode): number => PROBLEMS[code][0];

export interface FieldError {
  /** JSON Pointer into the request (`/body/startsAt`, `/query/limit`). */
  path: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  instance?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

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
export const MAX_PROBLEM_ERRORS = 20;
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
      message: `and ${more} more error${more === 1 ? '' : 's'} not listed; fix these and send again`,
    });
  }
  return kept;
}

export function problemBody(code: ProblemCode, requestId: string | undefined, o: ProblemOptions = {}): ProblemBody {
  const [status, title] = PROBLEMS[code];
  const base = o.typeBase;
  const detail = o.detail ?? title;
  const body: ProblemBody = {
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

export function problemResponse(code: ProblemCode, requestId: string | undefined, o: ProblemOptions = {}): Response {
  const body = problemBody(code, requestId, o);
  return new Response(JSON.stringify(body), {
    status: body.status,
    headers: {
      'content-type': PROBLEM_CONTENT_TYPE,
      ...(requestId ? { 'x-request-id': requestId } : {}),
      ...o.headers,
    },
  });
}

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
  siteNotPublished: () =>
    new AppError('site_not_published', { detail: 'This studio has not published a public site.' }),
  /** 409: the instructor already teaches `conflict` at an overlapping time. */
  doubleBooked: (conflict: { id: string; classId: string; startsAt: string; endsAt: string }) =>
    new AppError('instructor_double_booked', {
      detail: `The instructor already teaches occurrence ${conflict.id} from ${conflict.startsAt} to ${conflict.endsAt}.`,
      extra: { conflictingOccurrence: conflict },
    }),
};
