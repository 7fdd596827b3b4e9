import { type Static, Type as t } from '@sinclair/typebox';
import { MAX_PAGING_VALUE_LENGTH } from './fields';

/**
 * Query of every cursor-paginated Management list (docs/design/pagination.md). `limit` is a string at
 * run time so that `abc` clamps to 25 instead of failing; the documents type it as an
 * integer (`x-doc`), which is what a client should send.
 */
export const PageQuery = t.Object({
  // no NUL check: a cursor is checked by its signature (400 invalid_cursor), a limit is clamped, neither reaches SQL as text;
  // no bound below the request line's own: however long, a limit is clamped and a cursor not ours is 400, never a 422
  cursor: t.Optional(
    t.String({
      maxLength: MAX_PAGING_VALUE_LENGTH,
      description: 'The `next_cursor` of the previous page, exactly as received.',
    }),
  ),
  limit: t.Optional(
    t.String({
      maxLength: MAX_PAGING_VALUE_LENGTH,
      description: 'Page size, default 25, clamped to 1..100 (a non-numeric value means 25).',
      'x-doc': {
        type: 'integer',
        default: 25,
        description: 'Page size, default 25, clamped to 1..100 (a non-numeric value means 25).',
      },
    }),
  ),
});
export type PageQuery = Static<typeof PageQuery>;
