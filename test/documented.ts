/**
 * Every answer an HTTP test receives from a gateway surface must be what that surface's
 * OpenAPI document says: a documented status for the operation, the documented content
 * type, and a body matching the documented schema (strict ajv, JSON Schema 2020-12).
 * `test/preload.ts` wraps `fetch` so every test's responses pass through `checkDocumented`.
 */

import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { elysiaPath, type Operation, openApiDocument, operationsOf, type Surface } from '@studio/shared';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

/** A strict ajv with the document's component schemas reachable as `<surface>.json#/$defs/<Name>`. */
export function documentAjv(surface: Surface) {
  const doc = openApiDocument(surface, { publicUrl: 'http://127.0.0.1' }) as Json;
  const id = `${surface}.json`;
  const rewrite = (v: unknown) => JSON.parse(JSON.stringify(v).replaceAll('"#/components/schemas/', `"${id}#/$defs/`));
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  // OpenAPI's `discriminator` (the events' union) is a hint for generators; `oneOf` alone decides (ajv's own
  // discriminator option refuses a `mapping`)
  ajv.addKeyword({ keyword: 'discriminator' });
  ajv.addSchema({ $id: id, $defs: rewrite(doc.components.schemas) });
  /** A response object, following a `$ref` into components.responses. */
  const response = (r: Json): Json => (r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r);
  return { doc, ajv, response, compile: (schema: unknown) => ajv.compile(rewrite(schema) as object) };
}

interface Compiled {
  routes: { op: Operation; re: RegExp }[];
  responses: Map<string, { contentType?: string; validate?: ValidateFunction }>;
  problem: ValidateFunction;
}

const compiled = new Map<Surface, Compiled>();
function compiledOf(surface: Surface): Compiled {
  let c = compiled.get(surface);
  if (c) return c;
  const { doc, compile, response } = documentAjv(surface);
  const responses = new Map<string, { contentType?: string; validate?: ValidateFunction }>();
  const routes = operationsOf(surface).map((op) => {
    const item = doc.paths[op.path][op.method.toLowerCase()];
    for (const [status, r] of Object.entries<Json>(item.responses)) {
      const [contentType, media] = Object.entries<Json>(response(r).content ?? {})[0] ?? [];
      responses.set(`${op.id} ${status}`, { contentType, validate: media ? compile(media.schema) : undefined });
    }
    return { op, re: new RegExp(`^${elysiaPath(op.path).replace(/:\w+/g, '[^/]+')}$`) };
  });
  c = { routes, responses, problem: compile({ $ref: '#/components/schemas/Problem' }) };
  compiled.set(surface, c);
  return c;
}

/** The identity body, also of a test that asked fetch not to decompress (`decompress: false`). */
async function bodyText(res: Response): Promise<string> {
  const encoding = res.headers.get('content-encoding');
  if (!encoding) return res.text();
  const bytes = new Uint8Array(await res.arrayBuffer());
  // fetch has already decoded it unless the test turned that off
  const decoded =
    bytes[0] === 0x7b || bytes[0] === 0x5b
      ? bytes
      : encoding === 'br'
        ? brotliDecompressSync(bytes)
        : gunzipSync(bytes);
  return new TextDecoder().decode(decoded);
}

const KEYLESS = /^\/(healthz|readyz|openapi\.json|docs(\/.*)?)?$/;

/** Throws, naming what differs, when `res` is not what the surface's document promises. */
export async function checkDocumented(surface: Surface, method: string, url: URL, res: Response): Promise<void> {
  if (KEYLESS.test(url.pathname) || url.pathname === '/v1' || method === 'OPTIONS' || method === 'HEAD') return;
  const c = compiledOf(surface);
  const route = c.routes.find((r) => r.op.method === method && r.re.test(url.pathname));
  const type = res.headers.get('content-type')?.split(';')[0]?.trim();
  const where = `${surface} ${method} ${url.pathname} -> ${res.status}`;
  const text = await bodyText(res);
  const parse = () => {
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${where}: body is not JSON: ${text.slice(0, 200)}`);
    }
  };
  if (!route) {
    // unknown path or method: the gateway's own 404/405, always a problem
    if (type !== 'application/problem+json')
      throw new Error(`${where}: expected application/problem+json, got ${type}`);
    if (!c.problem(parse())) throw new Error(`${where}: not a Problem: ${JSON.stringify(c.problem.errors)}`);
    return;
  }
  const documented = c.responses.get(`${route.op.id} ${res.status}`);
  if (!documented)
    throw new Error(`${where}: status ${res.status} is not documented for ${route.op.id}: ${text.slice(0, 300)}`);
  if (!documented.contentType) {
    if (text.length) throw new Error(`${where}: documented without a body, got ${text.slice(0, 200)}`);
    return;
  }
  if (type !== documented.contentType) throw new Error(`${where}: documented ${documented.contentType}, got ${type}`);
  const body = parse();
  if (documented.validate && !documented.validate(body)) {
    throw new Error(
      `${where}: body does not match the ${route.op.id} document: ${JSON.stringify(documented.validate.errors)}\n${text.slice(0, 500)}`,
    );
  }
}

/** Surfaces whose answers are checked: base URL -> surface (the harness registers each stack's). */
export const checkedSurfaces = new Map<string, Surface>();
