import { type Static, Type as t } from '@sinclair/typebox';
import { MAX_PROBLEM_ERRORS, PROBLEM_CODES } from '../problem-codes';

/**
 * The one application/problem+json body (docs/design/errors.md) every document and test uses.
 * `code` is the closed vocabulary; extension members (`requiredScope`,
 * `conflictingOccurrence`) may be added, hence additionalProperties.
 */
export const Problem = t.Object(
  {
    type: t.String({ description: 'Stable URI of the code: its entry on /docs/problems (or about:blank)' }),
    title: t.String({ description: 'Short, fixed summary of the code' }),
    status: t.Integer({ minimum: 400, maximum: 599 }),
    detail: t.String({ description: 'What went wrong with this request, for a developer' }),
    code: t.Union(
      PROBLEM_CODES.map((c) => t.Literal(c)),
      { description: 'The machine-readable reason; branch on it' },
    ),
    instance: t.Optional(t.String({ description: 'urn:request:<X-Request-Id>' })),
    errors: t.Optional(
      t.Array(
        t.Object(
          {
            path: t.String({
              description:
                'JSON Pointer into the request: /body/startsAt, /query/limit (each segment cut to 64 characters)',
            }),
            message: t.String(),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: MAX_PROBLEM_ERRORS + 1,
          description: `On 422: every field that failed, and why; past ${MAX_PROBLEM_ERRORS}, one last entry says how many more`,
        },
      ),
    ),
    requiredScope: t.Optional(t.String({ description: 'On 403 scope_required: the scope the key lacks' })),
    conflictingOccurrence: t.Optional(
      t.Object(
        {
          id: t.String(),
          classId: t.String(),
          startsAt: t.String(),
          endsAt: t.String(),
        },
        { description: 'On 409 instructor_double_booked: the occurrence it clashes with' },
      ),
    ),
  },
  { additionalProperties: true },
);
export type Problem = Static<typeof Problem>;
