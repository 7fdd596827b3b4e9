/**
 * The tool catalog, generated from the operations registry and its OpenAPI documents (docs/design/mcp.md): one tool
 * per operation of a surface, named as the SDK names its method (`locations_rooms_create` is
 * `studio.locations.rooms.create`), with a flat input schema (path ids, query and body fields side by side), the
 * answer's schema as its output schema, and annotations saying what it does to the studio.
 */
import type { TObject } from '@sinclair/typebox';
import { methodOf, type Operation, openApiDocument, operationsOf, pathParams, type Surface } from '@studio/shared';
import { describe } from './descriptions';

type Json = Record<string, unknown>;

export interface Tool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly operation: Operation;
  /** The resource a client may narrow the list to (`?toolsets=classes,schedule`): the first word of the name. */
  readonly toolset: string;
  /** Where the SDK has it: `['locations', 'rooms']` and `create`. */
  readonly resource: readonly string[];
  readonly method: string;
  readonly params: readonly string[];
  readonly query: readonly string[];
  readonly body: readonly string[];
  readonly inputSchema: Json & { type: 'object' };
  readonly outputSchema: Json & { type: 'object' };
  readonly annotations: {
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: false;
  };
  /** A call's arguments built from the documents' examples; valid against `inputSchema`. */
  readonly example: Json;
  /** The document's example of the answer; valid against `outputSchema`. */
  readonly outputExample: unknown;
  /** A write that is not idempotent by nature (a create, an invite): a retry must not act twice. */
  readonly derivesKey: boolean;
}

/** The argument every write tool takes beside the API's own fields. */
export const IDEMPOTENCY_ARG = 'idempotencyKey';

/** Keywords of OpenAPI's, not JSON Schema's: a client's validator in strict mode refuses them. */
const OPENAPI_ONLY = new Set(['discriminator', 'xml', 'externalDocs', 'example']);

/** `schema` with every `$ref` into the document's components inlined: a tool's schema stands alone. */
function inline(schema: unknown, components: Record<string, Json>, seen: readonly string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, components, seen));
  if (!schema || typeof schema !== 'object') return schema;
  const s = schema as Json;
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace('#/components/schemas/', '');
    if (seen.includes(name)) throw new Error(`mcp tools: ${name} refers to itself`);
    const target = components[name];
    if (!target) throw new Error(`mcp tools: no component ${name}`);
    return inline(target, components, [...seen, name]);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (OPENAPI_ONLY.has(k) || k.startsWith('x-')) continue;
    out[k] =
      k === 'properties'
        ? Object.fromEntries(Object.entries(v as Json).map(([p, sub]) => [p, inline(sub, components, seen)]))
        : inline(v, components, seen);
  }
  return out;
}

/** Every string of the documents' examples: a path id's example is the first id of its kind among them. */
function exampleStrings(doc: Json): string[] {
  const out: string[] = [];
  JSON.stringify(doc, (k, v) => {
    if (typeof v === 'string' && k !== 'pattern' && /^[a-z]+_[0-9A-Za-z]+$/.test(v)) out.push(v);
    return v;
  });
  return out;
}

const WRITE_TOOL_FORBIDDEN = new Set(['cursor', 'limit']);

/** A tool's flat arguments: path ids, query and body fields side by side (and a write's idempotencyKey), with an example. */
function argumentsOf(o: Operation, name: string, spec: Json, components: Record<string, Json>, ids: string[]) {
  const parameters = (spec.parameters ?? []) as { name: string; in: string; description?: string; schema: Json }[];
  const properties: Json = {};
  const required: string[] = [];
  const example: Json = {};
  const add = (field: string, schema: unknown, where: string) => {
    if (field in properties) throw new Error(`mcp tools: ${name} has two arguments named ${field} (${where})`);
    properties[field] = schema;
  };
  const params = pathParams(o).map((p) => p.name);
  for (const p of parameters.filter((p) => p.in === 'path')) {
    add(p.name, { ...(inline(p.schema, components) as Json), description: p.description }, 'path');
    required.push(p.name);
    const id = ids.find((s) => new RegExp(p.schema.pattern as string).test(s));
    if (id) example[p.name] = id;
  }
  const query = parameters.filter((p) => p.in === 'query').map((p) => p.name);
  for (const p of parameters.filter((p) => p.in === 'query'))
    add(p.name, { ...(inline(p.schema, components) as Json), description: p.description }, 'query');
  const media = ((spec.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as
    | Json
    | undefined;
  const bodySchema = media ? (inline(media.schema, components) as Json) : null;
  const body: string[] = [];
  if (bodySchema) {
    if (bodySchema.type !== 'object' || !bodySchema.properties)
      throw new Error(`mcp tools: ${name}'s body is not an object with properties`);
    for (const [field, schema] of Object.entries(bodySchema.properties as Json)) {
      add(field, schema, 'body');
      body.push(field);
    }
    required.push(...((bodySchema.required as string[] | undefined) ?? []));
    const bodyExample = (media?.example ?? (components[refName(media?.schema)]?.examples as unknown[])?.[0]) as
      | Json
      | undefined;
    Object.assign(example, bodyExample ?? {});
  }
  if (o.method !== 'GET') {
    for (const f of WRITE_TOOL_FORBIDDEN)
      if (f in properties) throw new Error(`mcp tools: ${name} is a write with a ${f}`);
    add(IDEMPOTENCY_ARG, IDEMPOTENCY_SCHEMA, 'idempotency');
  }
  return { properties, required, example, params, query, body };
}

const IDEMPOTENCY_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description:
    'Optional. A unique string naming this one action; the same value again returns the first answer instead of acting twice. Leave it out unless you mean to repeat an identical call as a new action.',
};

/** The answer's schema (an object at the root, as MCP wants) and its example. */
function answerOf(o: Operation, name: string, spec: Json, components: Record<string, Json>) {
  const okSchema = (spec.responses as Json)[String(o.ok.status)] as Json;
  const okMedia = (okSchema.content as Json)['application/json'] as Json;
  const outputSchema = inline(okMedia.schema, components) as Json;
  // MCP wants an object at the root: a union of objects (an event, one schema per type) says so
  const branches = (outputSchema.oneOf ?? outputSchema.anyOf) as Json[] | undefined;
  if (!outputSchema.type && branches?.every((b) => b.type === 'object')) outputSchema.type = 'object';
  if (outputSchema.type !== 'object') throw new Error(`mcp tools: ${name}'s answer is not an object`);
  return { outputSchema: outputSchema as Json & { type: 'object' }, outputExample: okMedia.example };
}

function toolOf(o: Operation, doc: Json, ids: string[]): Tool {
  const components = ((doc.components as Json).schemas ?? {}) as Record<string, Json>;
  const spec = ((doc.paths as Json)[o.path] as Json)[o.method.toLowerCase()] as Json;
  const { resource, name: method } = methodOf(o);
  const name = [...resource, method].join('_').replaceAll('-', '_');
  const { properties, required, example, params, query, body } = argumentsOf(o, name, spec, components, ids);
  const { outputSchema, outputExample } = answerOf(o, name, spec, components);
  const write = o.method !== 'GET';
  const destructive = o.method === 'DELETE' || /^(?:management)(Cancel|Archive|Delete|Reset)/.test(o.id);
  // a create or an invite adds a record each time; an update, a cancel, a delete or a reset repeated changes nothing more
  const idempotent = !write || o.method !== 'POST' || !o.body;
  const base = {
    name,
    title: o.summary,
    operation: o,
    toolset: resource[0]!,
    resource,
    method,
    params,
    query,
    body,
    inputSchema: {
      type: 'object' as const,
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: false,
      examples: [example],
    },
    outputSchema,
    annotations: {
      readOnlyHint: !write,
      destructiveHint: write && destructive,
      idempotentHint: idempotent,
      openWorldHint: false as const,
    },
    example,
    outputExample,
    derivesKey: write && !idempotent,
  };
  return { ...base, description: describe(base) };
}

const refName = (schema: unknown): string =>
  String((schema as Json | undefined)?.$ref ?? '').replace('#/components/schemas/', '');

const CATALOG = new Map<Surface, readonly Tool[]>();

/** Every tool of a surface, one per operation, in the registry's order (made once per process). */
export function toolsOf(surface: Surface): readonly Tool[] {
  let tools = CATALOG.get(surface);
  if (!tools) {
    const doc = openApiDocument(surface, { publicUrl: 'http://127.0.0.1' }) as unknown as Json;
    const ids = exampleStrings(doc);
    tools = operationsOf(surface).map((o) => toolOf(o, doc, ids));
    const names = new Set(tools.map((t) => t.name));
    if (names.size !== tools.length) throw new Error(`mcp tools: two operations of ${surface} share a tool name`);
    CATALOG.set(surface, tools);
  }
  return tools;
}

/** The registry's TypeBox schemas of a tool's query and body, which its arguments are checked against. */
export const schemasOf = (t: Tool): { query?: TObject; body?: TObject } => ({
  query: t.operation.query,
  body: t.operation.body,
});
