/** One error class per status (docs/design/errors.md), all `StudioApiError`, carrying the problem+json body. */
import type { ProblemCode } from './generated/operations.js';

/** A field that failed validation: a JSON Pointer (`/body/name`, `/query/limit`) and what is wrong with it. */
export interface FieldError {
  path: string;
  message: string;
}

interface ProblemBody {
  type?: string;
  title?: string;
  detail?: string;
  code?: string;
  instance?: string;
  errors?: FieldError[];
  [field: string]: unknown;
}

/** An answer that was not a success, or a call that got no answer (`ConnectionError`, `TimeoutError`). */
export class StudioApiError extends Error {
  override name = 'StudioApiError';
  /** The HTTP status; undefined when no answer came. */
  readonly status: number | undefined;
  /** The problem's code, one of the closed list; undefined when no problem body came. */
  readonly code: ProblemCode | undefined;
  readonly type: string | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;
  readonly instance: string | undefined;
  /** `X-Request-Id` of the answer: quote it when asking for help. */
  readonly requestId: string | undefined;
  /** A 422's field errors. */
  readonly errors: FieldError[];
  /** The whole problem body (it may carry more, such as `conflictingOccurrence`). */
  readonly body: ProblemBody | undefined;
  readonly headers: Headers | undefined;

  constructor(message: string, init: { status?: number; body?: ProblemBody; headers?: Headers; cause?: unknown } = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    const b = init.body;
    this.status = init.status;
    this.body = b;
    this.headers = init.headers;
    this.code = b?.code as ProblemCode | undefined;
    this.type = b?.type;
    this.title = b?.title;
    this.detail = b?.detail;
    this.instance = b?.instance;
    this.errors = Array.isArray(b?.errors) ? b.errors : [];
    this.requestId = init.headers?.get('x-request-id') ?? undefined;
  }
}

export class BadRequestError extends StudioApiError {
  override name = 'BadRequestError';
}
export class AuthenticationError extends StudioApiError {
  override name = 'AuthenticationError';
}
export class PermissionDeniedError extends StudioApiError {
  override name = 'PermissionDeniedError';
}
export class NotFoundError extends StudioApiError {
  override name = 'NotFoundError';
}
export class ConflictError extends StudioApiError {
  override name = 'ConflictError';
}
export class UnprocessableEntityError extends StudioApiError {
  override name = 'UnprocessableEntityError';
}
export class RateLimitError extends StudioApiError {
  override name = 'RateLimitError';
}
export class InternalServerError extends StudioApiError {
  override name = 'InternalServerError';
}
/** No answer: the connection failed (refused, reset, DNS). */
export class ConnectionError extends StudioApiError {
  override name = 'ConnectionError';
}
/** No answer within the attempt's `timeout`. */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
}

const BY_STATUS: Record<number, typeof StudioApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The error of a non-success answer, by its status. */
export function errorOf(status: number, body: ProblemBody | undefined, headers: Headers): StudioApiError {
  const Class = BY_STATUS[status] ?? (status >= 500 ? InternalServerError : StudioApiError);
  const what = body?.code ? `${body.code}: ${body.detail ?? body.title ?? ''}` : `HTTP ${status}`;
  return new Class(`${status} ${what}`.trim(), { status, body, headers });
}
