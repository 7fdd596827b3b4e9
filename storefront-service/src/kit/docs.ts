import type { TSchema } from '@sinclair/typebox';
import type { DocumentDecoration } from 'elysia';
import { operation, PROBLEM_CONTENT_TYPE, type OperationId } from '@studio/shared';
import { Problem } from '@studio/shared/schemas/storefront';
import { CACHE_CONTROL } from './cacheable';

const problem = (description: string) => ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: Problem } } });
const CACHE_HEADERS = {
  ETag: { description: 'Strong tag of this answer; send it back in If-None-Match', schema: { type: 'string' } },
  'Cache-Control': { description: CACHE_CONTROL, schema: { type: 'string' } },
};

/** Problem responses every Storefront operation can give (gateway checks, contract §3). */
const COMMON = {
  401: problem('`api_key_missing`, `api_key_invalid`, `api_key_revoked` or `api_key_wrong_kind`'),
  403: problem('`studio_required`: the key\'s studio no longer exists'),
  429: problem('`rate_limited`: see `Retry-After` and the RateLimit headers'),
};

/**
 * OpenAPI `detail` of one Storefront operation, read from the operations table. Handlers
 * return ready Responses (ETag/304), so responses are documented here, from the same
 * TypeBox schemas the tests check bodies against.
 */
export function storefrontRoute(id: OperationId, summary: string, ok: TSchema, problems: Record<number, string>, description: string): { path: string; detail: DocumentDecoration } {
  const op = operation(id);
  const extra = Object.fromEntries(Object.entries(problems).map(([status, text]) => [status, problem(text)]));
  return {
    path: op.path,
    detail: {
      operationId: op.id,
      summary,
      description: `${description}\n\nAnswers carry \`ETag\` and \`Cache-Control: ${CACHE_CONTROL}\`; send \`If-None-Match\` to get 304.`,
      tags: ['Storefront'],
      security: [{ PublishableKeyAuth: [] }],
      // TypeBox schemas are JSON Schema; the OpenAPI types just do not know it
      responses: {
        200: { description: 'OK', headers: CACHE_HEADERS, content: { 'application/json': { schema: ok } } },
        304: { description: 'Not modified: `If-None-Match` named the current ETag', headers: CACHE_HEADERS },
        ...COMMON,
        ...extra,
      } as unknown as DocumentDecoration['responses'],
    },
  };
}
