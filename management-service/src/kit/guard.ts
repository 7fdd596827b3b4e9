import { AppError, isWriteMethod } from '@studio/shared';
import { verifiedCaller } from '@studio/shared/io';
import { Elysia } from 'elysia';
import { MAX_KEY_LENGTH } from './idempotency';

function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  if (length !== null) return Number(length) > 0;
  return request.headers.has('transfer-encoding');
}

const isJson = (type: string | null) => !!type && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type.trim());

const IDEMPOTENCY_HEADER = 'idempotency-key';
const idempotencyKeys = new WeakMap<Request, string>();

/** The request's Idempotency-Key, or the 400 of docs/design/errors.md. */
function readIdempotencyKey(request: Request): string {
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key === null)
    throw new AppError('idempotency_key_required', {
      detail: 'Send an Idempotency-Key header (a fresh value per action) on every Management write.',
    });
  if (key.length === 0 || key.length > MAX_KEY_LENGTH)
    throw new AppError('idempotency_key_invalid', {
      detail: `Idempotency-Key must be 1..${MAX_KEY_LENGTH} characters.`,
    });
  return key;
}

/** The Idempotency-Key the guard read and checked for this write (the write runner's key). */
export function idempotencyKeyOf(request: Request): string {
  const key = readKeyOf(request);
  if (key === undefined) throw new Error('idempotencyKeyOf: the write guard did not run for this request');
  return key;
}

/** The same, or undefined when the guard took none (not a write, or the key's own 400). */
export const readKeyOf = (request: Request): string | undefined => idempotencyKeys.get(request);

/**
 * Checks every Management write before its body is parsed or validated: the
 * Idempotency-Key header (400; the key is kept for the write runner, read once) and a
 * JSON content type for any body (415). Runs after the service kit's signature check,
 * so only signed requests get this far; what it throws is rendered by the kit's one
 * error handler.
 */
export const writeGuard = new Elysia({ name: 'management-write-guard' }).onRequest(({ request }) => {
  if (!isWriteMethod(request.method) || !verifiedCaller(request)) return;
  idempotencyKeys.set(request, readIdempotencyKey(request));
  if (hasBody(request) && !isJson(request.headers.get('content-type'))) {
    throw new AppError('unsupported_media_type', { detail: 'Write bodies must be application/json.' });
  }
});
