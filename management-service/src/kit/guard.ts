import { Elysia } from 'elysia';
import { AppError } from '@studio/shared';
import { callerOf } from '@studio/shared/service-kit';
import { idempotencyKeyOf } from './write';

const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  if (length !== null) return Number(length) > 0;
  return request.headers.has('transfer-encoding');
}

const isJson = (type: string | null) => !!type && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type.trim());

/**
 * Checks every Management write before its body is parsed or validated: the
 * Idempotency-Key header (400) and a JSON content type for any body (415). Runs after
 * the service kit's signature check, so only signed requests get this far; what it
 * throws is rendered by the kit's one error handler.
 */
export const writeGuard = new Elysia({ name: 'management-write-guard' }).onRequest(({ request }) => {
  if (!WRITES.has(request.method) || !callerOf(request)) return;
  idempotencyKeyOf(request);
  if (hasBody(request) && !isJson(request.headers.get('content-type'))) {
    throw new AppError('unsupported_media_type', { detail: 'Write bodies must be application/json.' });
  }
});
