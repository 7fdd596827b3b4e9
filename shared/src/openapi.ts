/**
 * The OpenAPI 3.1 document of a surface, built from the operations registry, the same way
 * for both surfaces (docs/design/self-description.md). The services register their routes from the same
 * rows, so the document cannot drift from what the code validates and answers.
 */
import type { TSchema } from '@sinclair/typebox';
import { JSON_TYPE } from './http';
import { eventUnion, WEBHOOK_PARAMETERS, WEBHOOKS_DESCRIPTION, webhooksDocument } from './openapi-webhooks';
import { ANY_READ, isWrite, type Operation, operationsOf, pathParams, problemsOf, type Surface } from './operations';
import { PROBLEM_CONTENT_TYPE, PROBLEMS, type ProblemCode } from './problem';
import * as classes from './schemas/classes';
import * as content from './schemas/content';
import * as coupons from './schemas/coupons';
import * as events from './schemas/events';
import { EXAMPLES } from './schemas/examples';
import { MAX_ID_LENGTH } from './schemas/fields';
import * as instructors from './schemas/instructors';
import * as keys from './schemas/keys';
import * as locations from './schemas/locations';
import * as members from './schemas/members';
import * as plans from './schemas/plans';
import { Problem } from './schemas/problem';
import * as programs from './schemas/programs';
import * as sandboxes from './schemas/sandboxes';
import * as schedule from './schemas/schedule';
import * as storefront from './schemas/storefront';

type Json = Record<string, unknown>;

const isSchema = (v: unknown): v is TSchema =>
  !!v && typeof v === 'object' && Object.getOwnPropertySymbols(v).length > 0;
/** Every exported schema gets its export name as its component name. */
const NAMES = new Map<unknown, string>();
for (const mod of [
  classes,
  content,
  coupons,
  instructors,
  locations,
  members,
  plans,
  programs,
  schedule,
  storefront,
  events,
  sandboxes,
  keys,
  { Problem },
]) {
  for (const [name, value] of Object.entries(mod)) if (isSchema(value) && !NAMES.has(value)) NAMES.set(value, name);
}
const examples = EXAMPLES as Record<string, unknown>;
function exampleOf(name: string): unknown {
  if (name in examples) return examples[name];
  if (name.endsWith('Page') && name.slice(0, -4) in examples)
    return { data: [examples[name.slice(0, -4)]], next_cursor: null };
  return undefined;
}

/** Keys that are ours (run-time hints), not JSON Schema. */
const DROP = new Set(['error', 'x-doc', 'x-pattern-hint']);

/**
 * A TypeBox schema as plain JSON Schema for the document: named schemas below the top
 * become `$ref`s, a union of string constants becomes an `enum` (what generated clients
 * read best), and `x-doc` replaces a run-time shape with the documented one.
 */
function toDoc(schema: unknown, refs: Set<string>, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toDoc(s, refs, false));
  if (!schema || typeof schema !== 'object') return schema;
  const name = NAMES.get(schema);
  if (!top && name) {
    refs.add(name);
    return { $ref: `#/components/schemas/${name}` };
  }
  const s = schema as Json;
  // converted in turn: an `x-doc` may be a named schema (a request's plan or coupon config documented as its union)
  if (s['x-doc']) return toDoc(s['x-doc'], refs, top);
  const anyOf = s.anyOf as Json[] | undefined;
  if (anyOf?.length && anyOf.every((b) => typeof b.const === 'string')) {
    const out: Json = { type: 'string', enum: anyOf.map((b) => b.const) };
    for (const k of ['description', 'default', 'examples']) if (s[k] !== undefined) out[k] = s[k];
    return out;
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (DROP.has(k)) continue;
    out[k] =
      k === 'properties' || k === 'patternProperties'
        ? Object.fromEntries(Object.entries(v as Json).map(([p, sub]) => [p, toDoc(sub, refs, false)]))
        : typeof v === 'object'
          ? toDoc(v, refs, false)
          : v;
  }
  return out;
}

/** A `$ref` to a named schema (collected as a component), or the schema inline. */
function ref(schema: TSchema, refs: Set<string>): unknown {
  return toDoc(schema, refs, false);
}

const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'Identifies this request; quote it when asking for help (problem bodies carry it in `instance`).',
    schema: { type: 'string' },
  },
  traceresponse: {
    description:
      "W3C Trace Context: `00-<trace-id>-<span-id>-<flags>`, the trace this call belongs to (the `traceparent` sent, continued, or one the gateway started) and the gateway's span in it.",
    schema: { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
  },
  RateLimit: {
    description:
      'IETF RateLimit fields: requests left in the bucket, burst included (`r`, so it may exceed the policy\'s `q`), and seconds until it is full again (`t`), e.g. `"key";r=99;t=1`. On every answer to a call whose key is known and whose limit was decided; a missing, malformed or unknown key\'s refusal has none.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description:
      'The key\'s sustained rate, e.g. `"key";q=100;w=1` (100 a second; its burst is in `RateLimit`\'s `r`).',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  Location: { description: 'Path of the created resource; GET it to read the record.', schema: { type: 'string' } },
  ETag: {
    description:
      'Tag of this answer\'s content (weak, `W/"…"`, on a compressed one); send it back in If-None-Match to get 304.',
    schema: { type: 'string' },
  },
  'Cache-Control': { description: '`public, max-age=30`.', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  Allow: { description: 'The methods this path accepts.', schema: { type: 'string' } },
  // CORS (Storefront only): the values the gateway sends, so a test can hold them to it
  'Access-Control-Allow-Origin': {
    description:
      "`*`: any website may call. A successful answer to a key restricted to websites names the calling page's origin instead.",
    schema: { type: 'string' },
    example: '*',
  },
  'Access-Control-Expose-Headers': {
    description: 'The headers browser code may read.',
    schema: { type: 'string' },
    example:
      'X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, ETag, Location, Idempotent-Replayed, traceresponse',
  },
  'Access-Control-Allow-Methods': {
    description: 'The methods a page may use.',
    schema: { type: 'string' },
    example: 'GET, OPTIONS',
  },
  'Access-Control-Allow-Headers': {
    description: 'The request headers a page may send.',
    schema: { type: 'string' },
    example: 'Authorization, Content-Type, If-None-Match, traceparent, tracestate',
  },
  'Access-Control-Max-Age': {
    description: "Seconds a browser may keep this preflight's answer.",
    schema: { type: 'integer' },
    example: 600,
  },
};
/** On every Storefront answer, whatever its status (docs/design/gateway.md). */
const CORS = ['Access-Control-Allow-Origin', 'Access-Control-Expose-Headers'];
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const headers = (...names: string[]) => Object.fromEntries(names.map((n) => [n, header(n)]));

const tagOf = (path: string) => {
  const seg = path.split('/')[2] ?? 'other';
  return seg.charAt(0).toUpperCase() + seg.slice(1);
};

const STATUS_NAMES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'UnprocessableContent',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

/** Problem responses shared by operations, written once under components.responses (each distinct one by its status name). */
class SharedResponses {
  readonly byName: Record<string, Json> = {};
  private readonly names = new Map<string, string>();
  ref(status: number, response: Json): Json {
    const key = JSON.stringify(response);
    let name = this.names.get(key);
    if (!name) {
      const base = STATUS_NAMES[status] ?? `Status${status}`;
      name = base;
      for (let n = 2; name in this.byName; n++) name = `${base}${n}`;
      this.names.set(key, name);
      this.byName[name] = response;
    }
    return { $ref: `#/components/responses/${name}` };
  }
}

/**
 * The problems an operation can answer, by status. With them `method_not_allowed`: what the
 * gateway answers (with `Allow`) when the operation's path is called with a method none of its
 * operations has; every path has such methods, so every operation documents the 405.
 */
function problemResponses(o: Operation, shared: SharedResponses): Record<string, Json> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of [...problemsOf(o), 'method_not_allowed' as const]) {
    const status = PROBLEMS[code][0];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, Json> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const extra =
      // a 503 says when to retry where the gateway knows (key verification unavailable)
      status === 429 || status === 503 || codes.includes('idempotency_request_in_progress')
        ? ['Retry-After']
        : status === 405
          ? ['Allow']
          : [];
    out[status] = shared.ref(status, {
      description:
        status === 405
          ? '`method_not_allowed`: the path was called with a method none of its operations has; `Allow` names the ones it has.'
          : codes.map((c) => `\`${c}\`: ${PROBLEMS[c][1]}`).join('; '),
      headers: headers(
        'X-Request-Id',
        'traceresponse',
        ...(status >= 500 ? [] : ['RateLimit', 'RateLimit-Policy']),
        ...extra,
        ...(o.surface === 'storefront' ? CORS : []),
      ),
      content: {
        [PROBLEM_CONTENT_TYPE]: {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/Problem' },
              { type: 'object', properties: { code: { type: 'string', enum: codes } } },
            ],
          },
        },
      },
    });
  }
  return out;
}

function parameters(o: Operation, refs: Set<string>): Json[] {
  const out: Json[] = pathParams(o).map((p) => ({
    name: p.name,
    in: 'path',
    required: true,
    description: `A ${p.kind} id; one that cannot be a ${p.kind} id is 404 \`not_found\`.`,
    schema: { type: 'string', pattern: p.pattern, maxLength: MAX_ID_LENGTH },
  }));
  if (o.query) {
    const required = new Set((o.query.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries(o.query.properties)) {
      const doc = toDoc(schema, refs, true) as Json;
      out.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(doc.description ? { description: doc.description } : {}),
        schema: doc,
      });
    }
  }
  return out;
}

/** An operation's description: what the registry says, then its scope, idempotency and paging rules. */
function operationNotes(o: Operation): string {
  return [
    o.description,
    o.scope === ANY_READ
      ? `Required scope: any one \`:read\` scope (\`${ANY_READ}\`).`
      : o.scope
        ? `Required scope: \`${o.scope}\`.`
        : '',
    isWrite(o)
      ? 'Send `Idempotency-Key` (1..255 characters); a retry with the same key and request replays the stored answer with `Idempotent-Replayed: true`.'
      : '',
    o.paginated
      ? "Cursor-paginated: `limit` 1..100 (default 25, clamped), `cursor` = the previous page's `next_cursor`."
      : '',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** Every keyed answer's headers: its request, its trace, its limit. */
const KEYED = ['X-Request-Id', 'traceresponse', 'RateLimit', 'RateLimit-Policy'];

/** An operation's success answer, and a Storefront read's 304. */
function successResponses(o: Operation, refs: Set<string>): Record<string, Json> {
  const okHeaders = [
    ...KEYED,
    ...(o.ok.status === 201 ? ['Location'] : []),
    ...(isWrite(o) ? ['Idempotent-Replayed'] : []),
    ...(o.surface === 'storefront' ? ['ETag', 'Cache-Control', ...CORS] : []),
  ];
  const responses: Record<string, Json> = {
    [o.ok.status]: {
      description: o.ok.status === 201 ? 'Created' : 'OK',
      headers: headers(...okHeaders),
      content: { [JSON_TYPE]: { schema: ref(o.ok.schema, refs), example: exampleOf(NAMES.get(o.ok.schema) ?? '') } },
    },
  };
  if (o.surface === 'storefront') {
    responses[304] = {
      description: 'Not modified: `If-None-Match` named the current ETag.',
      headers: headers(...KEYED, 'ETag', 'Cache-Control', ...CORS),
    };
  }
  return responses;
}

function operationDoc(o: Operation, refs: Set<string>, shared: SharedResponses): Json {
  const responses = { ...successResponses(o, refs), ...problemResponses(o, shared) };
  const doc: Json = {
    operationId: o.id,
    summary: o.summary,
    description: operationNotes(o),
    tags: [tagOf(o.path)],
    security: [{ [o.surface === 'storefront' ? 'PublishableKeyAuth' : 'SecretKeyAuth']: [] }],
    parameters: parameters(o, refs),
    responses,
  };
  if (o.scope) doc['x-required-scope'] = o.scope;
  if (isWrite(o)) {
    (doc.parameters as Json[]).unshift({
      name: 'Idempotency-Key',
      in: 'header',
      required: true,
      // no example: a reference's "Test Request" would send that one value with every write (the second one 409)
      description:
        'A fresh value per action, such as a new UUID (`crypto.randomUUID()`); reuse it only to retry that exact action. ' +
        'The same key with another request is 409 `idempotency_key_reused`.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  if (o.body) {
    const name = NAMES.get(o.body) ?? '';
    doc.requestBody = {
      required: true,
      content: { [JSON_TYPE]: { schema: ref(o.body, refs), example: exampleOf(name) } },
    };
  }
  return doc;
}

/**
 * A Storefront path's CORS preflight: answered by the gateway itself (no key, no operation of
 * the registry), documented so a browser developer finds what it answers.
 */
function preflightDoc(path: string): Json {
  const asked = (name: string, description: string) => ({
    name,
    in: 'header',
    required: false,
    description,
    schema: { type: 'string' },
  });
  return {
    summary: `Preflight ${path}`,
    description:
      'What a browser sends before a cross-origin call that carries `Authorization`. The gateway answers it without a key: 204 with the CORS headers. ' +
      'A key restricted to websites is checked on the call itself (403 `origin_not_allowed`).',
    tags: ['CORS'],
    security: [],
    parameters: [
      asked('Origin', "The calling page's origin."),
      asked('Access-Control-Request-Method', 'The method of the call to come (`GET`).'),
      asked('Access-Control-Request-Headers', 'The headers it will send, e.g. `authorization`.'),
    ],
    responses: {
      204: {
        description: 'The browser may make the call.',
        headers: headers(
          'X-Request-Id',
          'traceresponse',
          ...CORS,
          'Access-Control-Allow-Methods',
          'Access-Control-Allow-Headers',
          'Access-Control-Max-Age',
        ),
      },
    },
  };
}

const SURFACES = {
  storefront: {
    title: 'Studio API: Storefront',
    description:
      'Read-only public data of one studio, for its website. Authenticate with a publishable key: `Authorization: Bearer svc_pk_…`. ' +
      'A successful read (200) carries `ETag` and `Cache-Control: public, max-age=30`: send the tag back in `If-None-Match` and an unchanged answer is 304 without a body. ' +
      "Problem answers carry neither. Every answer carries the CORS headers, and a browser's preflight (`OPTIONS`) is answered without a key: any website may call, " +
      "unless the key is restricted to its studio's websites. " +
      "A test publishable key (`svc_pk_test_…`) reads one of the studio's sandboxes instead: the same operations on test data, seeded and reset apart from live data.",
    scheme: [
      'PublishableKeyAuth',
      "A publishable key (`svc_pk_…`): read-only, one studio, safe in browser code. A test key (`svc_pk_test_…`) reads one of the studio's sandboxes (test mode), never live data.",
      'svc_pk_<32 base62> or svc_pk_test_<32 base62>',
    ],
  },
  management: {
    title: 'Studio API: Management',
    description:
      'Back-office reads and scoped writes of one studio, with a secret key (`svc_sk_…`) that holds the scopes of the operations it calls. ' +
      'Every write needs `Idempotency-Key`; write bodies are `application/json` only (else 415). ' +
      "A test secret key (`svc_sk_test_…`) works on one of the studio's sandboxes: its own records, events, webhooks, rate limit and activity, never live data; `POST /v1/sandbox/reset` resets it.",
    scheme: [
      'SecretKeyAuth',
      "A secret key (`svc_sk_…`) with the scopes of the operations it calls (`x-required-scope`; `*:read` means any one read scope). Keep it on your server. A test key (`svc_sk_test_…`) works on one of the studio's sandboxes (test mode), never on live data, and may also hold `sandbox:write`.",
      'svc_sk_<32 base62> or svc_sk_test_<32 base62>',
    ],
  },
} as const;

export interface OpenApiOptions {
  /** Public base URL of the surface (`servers[0].url`). */
  publicUrl: string;
}

/** The components the document refers to (`refs`, which grows as they refer to further ones), each by its name. */
function componentSchemas(refs: Set<string>): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  // the feed's events, documented as a union discriminated by `type` (each branch the body of that type's webhook)
  if (refs.has('Event')) {
    const { event, components } = eventUnion((schema) => toDoc(schema, refs, false));
    Object.assign(schemas, components, { Event: event });
  }
  // components may refer to further components: resolve until nothing new appears
  for (let pending = [...refs].filter((n) => !(n in schemas)); pending.length; ) {
    for (const name of pending) {
      const schema = [...NAMES].find(([, n]) => n === name)![0];
      const doc = toDoc(schema, refs, true) as Json;
      const example = exampleOf(name);
      schemas[name] = example === undefined ? doc : { ...doc, examples: [example] };
    }
    pending = [...refs].filter((n) => !(n in schemas));
  }
  return schemas;
}

/** The whole OpenAPI 3.1 document of a surface. */
export function openApiDocument(surface: Surface, o: OpenApiOptions): Json {
  const meta = SURFACES[surface];
  const refs = new Set<string>(['Problem']);
  const paths: Record<string, Json> = {};
  const shared = new SharedResponses();
  for (const op of operationsOf(surface)) {
    (paths[op.path] ??= {})[op.method.toLowerCase()] = operationDoc(op, refs, shared);
  }
  if (surface === 'storefront') for (const path of Object.keys(paths)) paths[path]!.options = preflightDoc(path);
  // Management's changes are also pushed: one entry per event type (OpenAPI 3.1 `webhooks`), its resources $refs like the operations'
  const webhooks = surface === 'management' ? webhooksDocument((schema) => toDoc(schema, refs, false)) : null;
  const schemas = componentSchemas(refs);
  const [schemeName, schemeText, bearerFormat] = meta.scheme;
  return {
    openapi: '3.1.0',
    info: {
      title: meta.title,
      version: '1.0.0',
      description:
        `${meta.description}\n\nErrors are \`application/problem+json\` (the \`Problem\` schema); branch on \`code\`, and see \`${o.publicUrl}/docs/problems\` for what causes each code and how to fix it. ` +
        'A known path with a method it does not accept answers 405 `method_not_allowed` with `Allow`; an unknown path answers 404 `route_not_found`. ' +
        'Every answer carries `X-Request-Id`; every keyed answer carries the `RateLimit` and `RateLimit-Policy` fields.' +
        (webhooks ? `\n\n${WEBHOOKS_DESCRIPTION}` : '') +
        `\n\nThis document, for client generators: [${o.publicUrl}/openapi.json](${o.publicUrl}/openapi.json).`,
    },
    servers: [{ url: o.publicUrl }],
    tags: [
      ...[...new Set(operationsOf(surface).map((op) => tagOf(op.path)))].map((name) => ({ name })),
      ...(surface === 'storefront'
        ? [{ name: 'CORS', description: 'Browser preflights, answered by the gateway without a key.' }]
        : []),
    ],
    security: [{ [schemeName]: [] }],
    paths,
    ...(webhooks ? { webhooks } : {}),
    components: {
      securitySchemes: { [schemeName]: { type: 'http', scheme: 'bearer', bearerFormat, description: schemeText } },
      headers: HEADERS,
      ...(webhooks ? { parameters: WEBHOOK_PARAMETERS } : {}),
      responses: shared.byName,
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}
