import { Elysia } from 'elysia';
import { AppError, problemResponse, problemTypeBase, type Config } from '@studio/shared';
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
 * the service kit's signature check, so only signed requests get this far.
 */
export const writeGuard = (config: Config) => {
  const typeBase = problemTypeBase(config, 'management');
  return new Elysia({ name: 'management-write-guard' }).onRequest(({ request }) => {
    if (!WRITES.has(request.method)) return;
    const caller = callerOf(request);
    if (!caller) return;
    try {
      idempotencyKeyOf(request);
    } catch (err) {
      if (err instanceof AppError) return problemResponse(err.code, caller.requestId, { typeBase, ...err.options });
      throw err;
    }
    if (hasBody(request) && !isJson(request.headers.get('content-type'))) {
      return problemResponse('unsupported_media_type', caller.requestId, { typeBase, detail: 'Write bodies must be application/json.' });
    }
  });
};
