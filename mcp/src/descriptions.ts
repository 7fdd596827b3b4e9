/**
 * A tool's description, written for a model: what it does (the registry's summary and rules), when to use it, and
 * what it must not be used for (docs/design/mcp.md). One sentence pattern per kind of operation, so 55 tools read
 * alike and a new operation needs no prose of its own.
 */
import type { Operation } from '@studio/shared';

interface Described {
  readonly name: string;
  readonly operation: Operation;
  readonly resource: readonly string[];
  readonly method: string;
}

/** How long a create's own idempotency key holds: identical arguments within it are one action (docs/design/mcp.md). */
export const DERIVED_KEY_WINDOW_MS = 10 * 60_000;

const sibling = (t: Described, method: string) => `${[...t.resource, method].join('_').replaceAll('-', '_')}`;

function when(t: Described): string {
  const o = t.operation;
  const list = sibling(t, 'list');
  if (t.name === 'key_retrieve')
    return 'Use it first when unsure what you may do: its `scopes` say which tools work, and `mode: test` means every call works on a sandbox, never on live data.';
  if (o.method === 'GET' && o.paginated)
    return `Returns one page (up to \`limit\`, default 25) and \`next_cursor\`: to read on, call again with \`cursor\` set to it (the cursor keeps the filters it was made with); \`next_cursor\` null means there is no more. Use it to browse or to find ids; to read one record whose id you have, use \`${sibling(t, 'retrieve')}\`.`;
  if (o.method === 'GET' && t.method === 'list')
    return 'Returns the whole list in one answer. Read-only: it changes nothing.';
  if (o.method === 'GET')
    return `Use it when you have the id (from a list or an earlier answer)${o.surface === 'management' ? `; to find ids, use \`${list}\`` : ''}. Read-only: it changes nothing.`;
  if (t.method === 'reset')
    return 'Deletes every record of the sandbox and puts its demo seed back. Use it only when the user asks to start the sandbox over; never to undo one change.';
  if (o.method === 'DELETE' || /^(?:cancel|archive|delete)$/.test(t.method))
    return `It cannot be undone. Use it only when the user asked for exactly this; not to change a field (use \`${sibling(t, 'update')}\`${t.method === 'cancel' ? ' or reschedule' : ''} instead).`;
  if (o.method === 'PATCH')
    return 'Send only the fields to change; the others keep their values. Not for creating a record, nor for cancelling or deleting one.';
  return `Calling it again with identical arguments within ${DERIVED_KEY_WINDOW_MS / 60_000} minutes returns the first answer instead of acting twice (so a retry is safe); to repeat it on purpose as a new action, or to try again after fixing the cause of a refusal, pass a new \`idempotencyKey\`. Not for changing an existing record.`;
}

export function describe(t: Described): string {
  const o = t.operation;
  const scope =
    o.surface === 'storefront'
      ? 'Storefront (public data; any publishable key).'
      : o.scope
        ? `Needs the \`${o.scope}\` scope.`
        : 'Any key may call it.';
  const failure =
    o.method === 'GET'
      ? ''
      : ' A refusal comes back as an error with `status`, `code`, `detail` and field `errors`: correct the arguments it names.';
  return `${o.summary}. ${o.description ?? ''} ${when(t)} ${scope}${failure}`.replace(/\s+/g, ' ').trim();
}
