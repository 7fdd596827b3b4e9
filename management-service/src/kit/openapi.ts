import { Elysia, t, type TSchema } from 'elysia';
import { openapi } from '@elysiajs/openapi';
import { elysiaPath, operation, PROBLEMS, type OperationId, type ProblemCode } from '@studio/shared';

/** application/problem+json (contract §4); 422 bodies add `errors`. */
export const ProblemSchema = t.Object({
  type: t.String({ description: 'Stable URI of the code: its entry on /docs/problems' }),
  title: t.String(),
  status: t.Integer(),
  detail: t.String(),
  code: t.String(),
  instance: t.Optional(t.String({ description: 'urn:request:<X-Request-Id>' })),
  errors: t.Optional(t.Array(t.Object({ path: t.String({ description: 'JSON Pointer' }), message: t.String() }))),
}, { additionalProperties: true, title: 'Problem' });

const problemOf = (codes: ProblemCode[]) => t.Object(ProblemSchema.properties, {
  additionalProperties: true,
  description: codes.map((c) => `\`${c}\`: ${PROBLEMS[c][1]}`).join('; '),
});

const IdempotencyHeaders = t.Object({
  'idempotency-key': t.String({ minLength: 1, maxLength: 255, description: 'A fresh value per action; reuse it only to retry that exact action.' }),
}, { additionalProperties: true });

const WRITE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/**
 * OpenAPI details of one Management operation, read from the operations table: its
 * operationId, required scope (in the description and `x-required-scope`), and its
 * problem responses, the gateway's (401/403/429), the idempotency ones for writes,
 * and the operation's own `problems`. Spread the result into the route's options:
 *
 *   .post(path('managementCreatePlan'), handler, { body: CreatePlanBody,
 *     ...mgRoute('managementCreatePlan', 'Create a plan', { 201: Plan }, { 422: ['invalid_plan_config'] }) })
 */
export function mgRoute(id: OperationId, summary: string, ok: Record<number, TSchema>, problems: Partial<Record<number, ProblemCode[]>> = {}, description?: string) {
  const op = operation(id);
  const write = WRITE.has(op.method);
  const codes: Record<number, ProblemCode[]> = {
    401: ['api_key_missing', 'api_key_invalid', 'api_key_revoked', 'api_key_wrong_kind'],
    403: ['scope_required', 'studio_required'],
    429: ['rate_limited'],
  };
  const add = (status: number, list: ProblemCode[]) => (codes[status] = [...new Set([...(codes[status] ?? []), ...list])]);
  if (write) {
    add(400, ['idempotency_key_required', 'idempotency_key_invalid', 'malformed_json']);
    add(409, ['idempotency_key_reused', 'idempotency_request_in_progress']);
    add(413, ['payload_too_large']);
    add(415, ['unsupported_media_type']);
    add(422, ['validation_failed']);
  }
  if (op.paginated) add(400, ['invalid_cursor']);
  if (op.method === 'GET' && !op.paginated) add(422, ['validation_failed']);
  for (const [status, list] of Object.entries(problems)) add(Number(status), list ?? []);
  const response: Record<number, TSchema> = { ...ok };
  for (const [status, list] of Object.entries(codes)) response[Number(status)] = problemOf(list);
  const notes = [
    `Required scope: \`${op.scope}\`.`,
    write ? 'Send `Idempotency-Key` (1..255 characters); a retry with the same key and request replays the stored response with `Idempotent-Replayed: true`.' : '',
    op.paginated ? 'Cursor-paginated: `limit` 1..100 (default 25, clamped), `cursor` = the previous page\'s `next_cursor`.' : '',
  ].filter(Boolean);
  return {
    response,
    detail: {
      operationId: op.id,
      summary,
      description: [description, ...notes].filter(Boolean).join('\n\n'),
      tags: [tagOf(op.path)],
      security: [{ SecretKeyAuth: [] }],
      'x-required-scope': op.scope,
    } as Record<string, unknown>,
    // documents the header; the write guard has already answered 400 when it is missing or invalid
    ...(write ? { headers: IdempotencyHeaders } : {}),
  };
}

/** Elysia path of an operation (`/v1/classes/:classId`). */
export const pathOf = (id: OperationId) => elysiaPath(operation(id).path);

const tagOf = (path: string) => {
  const seg = path.split('/')[2] ?? 'other';
  return seg.charAt(0).toUpperCase() + seg.slice(1);
};

/** `/openapi.json` and `/docs` of the Management surface (the gateway proxies both). */
export const managementOpenApi = (publicUrl: string) =>
  new Elysia({ name: 'management-openapi' }).use(openapi({
    path: '/docs',
    specPath: '/openapi.json',
    provider: 'scalar',
    exclude: { paths: ['/healthz', '/readyz'] },
    documentation: {
      info: {
        title: 'Studio API: Management',
        version: '1.0.0',
        description: 'Back-office reads and scoped writes of one studio, with a secret key (`svc_sk_…`). Every write needs `Idempotency-Key`. Errors are `application/problem+json`; every code is explained on `/docs/problems`.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: { SecretKeyAuth: { type: 'http', scheme: 'bearer', description: 'A secret key, `svc_sk_…`, with the scopes of the operations it calls.' } },
      },
      security: [{ SecretKeyAuth: [] }],
    },
  }));
