/**
 * Walks a schema of the registry (TypeBox, or the plain JSON Schema of an `x-doc` or a
 * document) the way the bound and NUL tests need: every place a value can be, by JSON
 * Pointer. Used by shared/test/bounds.test.ts and management-service/test/data-errors.test.ts.
 */
import { Kind } from '@sinclair/typebox';

type Json = Record<string, any>;
const kindOf = (s: Json): string | undefined => s[Kind as unknown as string] as string | undefined;
const isConst = (s: Json) => 'const' in s || Array.isArray(s.enum);

/**
 * Why each place under `schema` is unbounded: a string without `maxLength` (constants and
 * enums are bounded by what they list), an array without `maxItems`, an open map
 * (`patternProperties` or a schema as `additionalProperties`), or a value of any shape
 * (`unknown`) that no `x-doc` documents. `resolve` follows a document's `$ref`s.
 */
export function unbounded(schema: Json, at = '', resolve?: (ref: string) => Json, seen = new Set<Json>()): string[] {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  const out: string[] = [];
  const walk = (s: Json, where: string) => out.push(...unbounded(s, where, resolve, seen));
  if (schema.$ref) {
    if (!resolve) return [`${at || '/'}: $ref ${schema.$ref} without a resolver`];
    walk(resolve(schema.$ref), at);
    return out;
  }
  if (schema['x-doc']) walk(schema['x-doc'], at);
  const kind = kindOf(schema);
  if ((kind === 'Unknown' || kind === 'Any') && !schema['x-doc']) out.push(`${at || '/'}: any value, undocumented`);
  if (schema.type === 'string' && !isConst(schema) && typeof schema.maxLength !== 'number')
    out.push(`${at || '/'}: string without maxLength`);
  if (schema.type === 'array') {
    if (typeof schema.maxItems !== 'number') out.push(`${at || '/'}: array without maxItems`);
    if (schema.items) walk(schema.items, `${at}/0`);
  }
  if (schema.patternProperties) out.push(`${at || '/'}: open map (patternProperties)`);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
    out.push(`${at || '/'}: open map (additionalProperties)`);
  for (const [k, v] of Object.entries<Json>(schema.properties ?? {})) walk(v, `${at}/${k}`);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const b of schema[key] ?? []) walk(b, at);
  return out;
}

/**
 * Every place under `schema` that holds free text (a string that is not a constant), with
 * whether it lies inside an `x-doc` (checked by the service, not by the schema).
 */
export function textPaths(schema: Json, at = '', documented = false): { path: string; documented: boolean }[] {
  if (!schema || typeof schema !== 'object') return [];
  const out: { path: string; documented: boolean }[] = [];
  const kind = kindOf(schema);
  if ((kind === 'Unknown' || kind === 'Any') && schema['x-doc']) return textPaths(schema['x-doc'], at, true);
  if (schema.type === 'string' && !isConst(schema)) out.push({ path: at, documented });
  if (schema.type === 'array' && schema.items) out.push(...textPaths(schema.items, `${at}/0`, documented));
  for (const [k, v] of Object.entries<Json>(schema.properties ?? {}))
    out.push(...textPaths(v, `${at}/${k}`, documented));
  for (const b of schema.anyOf ?? []) out.push(...textPaths(b, at, documented));
  const seen = new Set<string>();
  return out.filter((p) => !seen.has(p.path) && seen.add(p.path));
}

/** `value` with `v` at the JSON Pointer `path`, creating the objects and arrays on the way. */
export function withValueAt(value: unknown, path: string, v: (old: unknown) => unknown): Json {
  const root = structuredClone(value ?? {}) as Json;
  const parts = path.split('/').slice(1);
  let o: Json = root;
  for (const [i, p] of parts.entries()) {
    if (i === parts.length - 1) {
      o[p] = v(o[p]);
      break;
    }
    if (o[p] == null || typeof o[p] !== 'object') o[p] = /^\d+$/.test(parts[i + 1]!) ? [] : {};
    o = o[p];
  }
  return root;
}
