/**
 * A tool call: its flat arguments checked against the registry's schemas (a refusal in the API's own shape, 422
 * `validation_failed` with field `errors`), split into path ids, query and body, and made through the SDK with the
 * agent's key, so the gateway applies scopes, limits and idempotency as to any client (docs/design/mcp.md).
 */

import { StudioApiError } from '@studio/sdk';
import { type FieldError, pathParams, schemaErrors } from '@studio/shared';
import { DERIVED_KEY_WINDOW_MS } from './descriptions';
import { IDEMPOTENCY_ARG, type Tool } from './tools';

type Json = Record<string, unknown>;

/** What a tool call answers, as MCP's `tools/call` result. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Json;
  isError?: boolean;
}

/** A problem as the agent reads it: what the API said, so it can correct itself. */
export interface ToolProblem {
  status: number;
  code: string;
  detail?: string;
  errors?: FieldError[];
  requestId?: string;
  [key: string]: unknown;
}

export const problemResult = (p: ToolProblem): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(p) }],
  isError: true,
});

const okResult = (answer: Json): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(answer) }],
  structuredContent: answer,
});

/** The arguments' refusals, in the API's pointers (`/path/classId`, `/query/limit`, `/body/title`, `/idempotencyKey`). */
export function argumentErrors(tool: Tool, args: Json): FieldError[] {
  const errors: FieldError[] = [];
  const known = new Set([...tool.params, ...tool.query, ...tool.body]);
  if (tool.operation.method !== 'GET') known.add(IDEMPOTENCY_ARG);
  for (const name of Object.keys(args))
    if (!known.has(name)) errors.push({ path: `/${name}`, message: 'is not an argument of this tool' });
  for (const p of pathParams(tool.operation)) {
    const v = args[p.name];
    if (typeof v !== 'string')
      errors.push({ path: `/path/${p.name}`, message: v === undefined ? 'is required' : 'must be a string' });
    else if (v.length > 64 || !new RegExp(p.pattern).test(v))
      errors.push({ path: `/path/${p.name}`, message: `is not ${p.kind === 'occurrence' ? 'an' : 'a'} ${p.kind} id` });
  }
  const key = args[IDEMPOTENCY_ARG];
  if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 200))
    errors.push({ path: `/${IDEMPOTENCY_ARG}`, message: 'must be a string of 1 to 200 characters' });
  const { query, body } = tool.operation;
  // a query arrives as text: the registry's query schemas check strings (`limit` as `"25"`), as the API does
  if (query) errors.push(...schemaErrors(query, asQuery(pick(args, tool.query)), '/query'));
  if (body) errors.push(...schemaErrors(body, pick(args, tool.body), '/body'));
  return errors;
}

function pick(args: Json, names: readonly string[]): Json {
  const out: Json = {};
  for (const n of names) if (args[n] !== undefined) out[n] = args[n];
  return out;
}

const asQuery = (q: Json): Json =>
  Object.fromEntries(
    Object.entries(q).map(([k, v]) => [k, typeof v === 'number' || typeof v === 'boolean' ? String(v) : v]),
  );

/** JSON with its keys sorted at every level: the same arguments in any order are one call. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, (x as Json)[k]]),
        )
      : x,
  );

/**
 * A create's own idempotency key when the agent sends none: a hash of the key, the tool and its arguments within a
 * 10-minute window, so a tool call retried (by the client, or by a model that lost the answer) acts once, and the
 * same call made later is a new action (docs/design/mcp.md, "Idempotency").
 */
export function derivedKey(apiKey: string, tool: Tool, args: Json, now = Date.now()): string {
  const window = Math.floor(now / DERIVED_KEY_WINDOW_MS);
  const h = new Bun.CryptoHasher('sha256').update(`${apiKey}\n${tool.name}\n${window}\n${canonical(args)}`);
  return `mcp_${h.digest('base64url')}`;
}

/** What the SDK's resource tree offers: a method per leaf. */
type Methods = { [name: string]: ((...args: unknown[]) => Promise<unknown>) | Methods };

export interface CallContext {
  studio: unknown;
  apiKey: string;
  signal?: AbortSignal;
}

/** Calls `tool` with `args` through the SDK; a problem (the API's, or the arguments') is an error result, never a throw. */
export async function callTool(tool: Tool, args: Json, ctx: CallContext): Promise<ToolResult> {
  const errors = argumentErrors(tool, args);
  if (errors.length)
    return problemResult({
      status: 422,
      code: 'validation_failed',
      detail: 'The arguments do not fit the tool: see errors (nothing was sent to the API).',
      errors,
    });
  let node = ctx.studio as Methods;
  for (const r of tool.resource) node = node[r.replace(/[-_](\w)/g, (_, c: string) => c.toUpperCase())] as Methods;
  const fn = node[tool.method] as (...a: unknown[]) => Promise<unknown>;
  const call: unknown[] = tool.params.map((p) => args[p]);
  if (tool.body.length) call.push(pick(args, tool.body));
  else if (tool.query.length) call.push(pick(args, tool.query));
  const write = tool.operation.method !== 'GET';
  const given = args[IDEMPOTENCY_ARG] as string | undefined;
  const idempotencyKey =
    given ?? (tool.derivesKey ? derivedKey(ctx.apiKey, tool, { ...args, [IDEMPOTENCY_ARG]: undefined }) : undefined);
  call.push({ signal: ctx.signal, ...(write && idempotencyKey ? { idempotencyKey } : {}) });
  try {
    const answer = await fn(...call);
    // a paginated method's answer is its first page; the tool's is the API's page
    if (tool.operation.paginated) {
      const page = answer as { data: unknown[]; nextCursor: string | null };
      return okResult({ data: page.data, next_cursor: page.nextCursor });
    }
    return okResult(answer as Json);
  } catch (err) {
    if (!(err instanceof StudioApiError)) throw err;
    const body = (err.body ?? {}) as Json;
    return problemResult({
      ...body,
      status: err.status ?? 502,
      code: err.code ?? 'connection_failed',
      detail: err.detail ?? err.message,
      ...(err.errors?.length ? { errors: err.errors } : {}),
      ...(err.requestId ? { requestId: err.requestId } : {}),
      ...(tool.derivesKey && !given && err.status !== undefined && err.status < 500
        ? {
            retry:
              'Calling again with the same arguments within 10 minutes repeats this answer: after fixing the cause, call again with a new idempotencyKey.',
          }
        : {}),
    });
  }
}
