import { Kind, type TSchema } from '@sinclair/typebox';
import { Elysia, ValidationError } from 'elysia';
import { type Config, problemTypeBase } from '../config';
import { jsonResponse, log } from '../http';
import type { Surface } from '../operations';
import { translatePgError } from '../pg-errors';
import {
  AppError,
  type FieldError,
  type ProblemCode,
  type ProblemOptions,
  problems,
  problemResponse as renderProblem,
} from '../problem';
import { type Caller, verifySignature } from '../signing';
import { requestTarget } from '../target';
import { fieldMessage, type SchemaError, schemaErrors } from '../validation';
import type { Sql } from './db';
import { readinessCheck, redisCheckOf } from './readiness';
import type { Redis } from './redis';

/**
 * A request refused before its handler ran: its body not JSON (400 `malformed_json`), not of its schema
 * (422 `validation_failed`), or not of a JSON media type (415). `body` is the parsed body when there is one,
 * else null (the signed SHA-256 of its bytes stands for it).
 */
export interface EarlyRefusal {
  request: Request;
  failure: AppError;
  body: { value: unknown } | null;
}

export interface ServiceKitOptions {
  name: string;
  surface: Surface;
  config: Config;
  sql: Sql;
  redis: Redis | null;
  /**
   * Answers an early refusal in the service's own way (Management: stored under the write's Idempotency-Key, so
   * the key answers it again, and another request with that key is 409), or null for the kit's problem answer.
   */
  refused?: (r: EarlyRefusal) => Promise<Response | null>;
}

const UNSIGNED = new Set(['/healthz', '/readyz']);
const callers = new WeakMap<Request, Caller>();

/** The caller the gateway signed for a request (set by the kit before any route runs). */
export const verifiedCaller = (request: Request): Caller => callers.get(request)!;
/** The same, or undefined for a request whose signature was not checked or did not hold (health, an unsigned call). */
export const callerIfSigned = (request: Request): Caller | undefined => callers.get(request);

function validationErrors(error: ValidationError): FieldError[] {
  const part =
    error.type === 'body'
      ? '/body'
      : error.type === 'query'
        ? '/query'
        : error.type === 'params'
          ? '/params'
          : `/${error.type}`;
  // every error of the value at once, looking into nullable objects (Elysia's `all` stops at a union)
  const v = error.validator as { schema?: unknown };
  const schema = (v && typeof v === 'object' && 'schema' in v ? v.schema : v) as TSchema | undefined;
  if (schema && typeof schema === 'object' && Kind in schema) return schemaErrors(schema, error.value, part);
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of error.all) {
    const path = part + ('path' in e && e.path ? e.path : '');
    const message = 'schema' in e ? fieldMessage(e as SchemaError) : String((e as { message?: unknown }).message);
    if (seen.has(path)) continue; // TypeBox reports every failing branch of a union; the first says enough
    seen.add(path);
    out.push({ path, message });
  }
  return out;
}

/**
 * The problem an error stands for when it is the caller's: ours (an AppError, thrown or wrapped by Elysia's body
 * parser) or Elysia's own parse and validation errors; null for anything else.
 */
function callerFailureOf(code: unknown, error: unknown): AppError | null {
  // Elysia wraps what a body parser throws (our bounded reader's 413 / 400) in its ParseError
  const cause = code === 'PARSE' ? (error as Error).cause : undefined;
  if (cause instanceof AppError) return cause;
  if (error instanceof AppError) return error;
  // a request's part that fails its schema is the caller's; an answer that fails its own (`response`) is ours: a 500
  if (code === 'VALIDATION' && error instanceof ValidationError && error.type !== 'response')
    return problems.invalidFields(validationErrors(error));
  if (code === 'PARSE') return new AppError('malformed_json', { detail: 'The request body is not valid JSON.' });
  return null;
}

/** The refusal of a signed request before its handler ran (`EarlyRefusal`), or null for any other error. */
function earlyRefusal(request: Request, code: unknown, error: unknown): EarlyRefusal | null {
  const failure = callerFailureOf(code, error);
  // the body unread as JSON (a 413 or a bad signature is no refusal of the request's content)
  if (code === 'PARSE' && failure?.code === 'malformed_json') return { request, failure, body: null };
  if (code === 'VALIDATION' && error instanceof ValidationError && error.type === 'body')
    return { request, failure: failure!, body: { value: error.value } };
  if (error instanceof AppError && error.code === 'unsupported_media_type')
    return { request, failure: error, body: null };
  return null;
}

/** Why the database was unavailable, at most once a second (an outage answers hundreds of 503s). */
let lastUnavailableLog = 0;
function unavailableLog(service: string, requestId: string | undefined, error: unknown) {
  const now = Date.now();
  if (now - lastUnavailableLog < 1_000) return;
  lastUnavailableLog = now;
  log('warn', 'database unavailable', {
    service: `${service}-service`,
    requestId,
    code: (error as { code?: string })?.code,
    error: String(error),
  });
}

/** The service's problem answers: by code, and for any error (the one vocabulary). */
function answers(o: ServiceKitOptions) {
  const typeBase = problemTypeBase(o.config, o.surface);
  const problemResponse = (code: ProblemCode, requestId: string | undefined, options: ProblemOptions = {}) =>
    renderProblem(code, requestId, { typeBase, ...options });

  /** Every error as its problem answer, from the one vocabulary. */
  function answer(code: unknown, error: unknown, requestId: string | undefined): Response {
    const failure = callerFailureOf(code, error);
    if (failure) return problemResponse(failure.code, requestId, failure.options);
    if (code === 'NOT_FOUND') return problemResponse('route_not_found', requestId);
    const pg = translatePgError(error);
    if (pg?.code === 'service_unavailable') unavailableLog(o.name, requestId, error);
    if (pg) return problemResponse(pg.code, requestId, pg.options);
    const tooLarge = (error as { code?: string })?.code === 'ERR_BODY_TOO_LARGE';
    if (tooLarge) return problemResponse('payload_too_large', requestId);
    log('error', 'unhandled error', {
      // the process's name, as its access lines carry it (and as the tests' in-process apps need it said)
      service: `${o.name}-service`,
      requestId,
      error: error instanceof Error ? error.stack : String(error),
    });
    return problemResponse('internal_error' satisfies ProblemCode, requestId, {
      detail: 'Something went wrong on our side; the request id identifies it.',
    });
  }
  return { problemResponse, answer };
}

/**
 * What every internal service shares: refuse anything the gateway did not sign
 * (401 `gateway_signature_invalid`), render every error as problem+json from the
 * one vocabulary, and answer `/healthz` and `/readyz`. Registered first, so its
 * error handler covers every route after it.
 */
export function serviceKit(o: ServiceKitOptions) {
  const { problemResponse, answer } = answers(o);
  return (
    new Elysia({ name: `service-kit:${o.name}` })
      // a returned record or list is written with the one JSON media type spelling (Elysia's would add `;charset=utf-8`);
      // the success schema has been checked by then, and Responses (problems, stored writes) pass untouched
      .mapResponse({ as: 'global' }, ({ responseValue, set }) => {
        const v = responseValue as { constructor?: unknown } | null;
        if (v && (v.constructor === Object || Array.isArray(v))) {
          return jsonResponse(v, {
            status: typeof set.status === 'number' ? set.status : 200,
            headers: set.headers as Record<string, string>,
          });
        }
      })
      .onRequest(({ request }) => {
        const path = requestTarget(request.url).pathAndQuery;
        if (UNSIGNED.has(path)) return;
        const caller = verifySignature(o.config.GATEWAY_SECRET, request.method, path, request.headers);
        if (!caller)
          return problemResponse('gateway_signature_invalid', undefined, {
            detail: 'This service is reachable only through the gateway.',
          });
        callers.set(request, caller);
      })
      .onError({ as: 'global' }, async ({ code, error, request }) => {
        const requestId = callers.get(request)?.requestId;
        const early = o.refused && callers.has(request) ? earlyRefusal(request, code, error) : null;
        if (!early) return answer(code, error, requestId);
        try {
          return (await o.refused!(early)) ?? answer(code, error, requestId);
        } catch (err) {
          return answer('UNKNOWN', err, requestId);
        }
      })
      .get('/healthz', () => ({ status: 'ok' }))
      .get('/readyz', readinessCheck(o.sql, redisCheckOf(o.config, o.redis)))
  );
}
