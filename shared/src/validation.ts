/**
 * What a developer reads in `errors[].message` when a value fails its schema: the allowed
 * values, the expected format or the bound, in words, never TypeBox's internals (`should be
 * one of: 'string', 'string'`) or a raw regex. Elysia's VALIDATION errors and our own
 * schema checks (plan and coupon configs) both go through `fieldMessage`.
 */
import type { TSchema } from '@sinclair/typebox';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import type { FieldError } from './problem';
import { MAX_ERRORS_SOUGHT } from './problem-codes';
import { INSTANT_RANGE, parseInstant } from './time';

export interface SchemaError {
  type: number;
  schema: TSchema;
  value: unknown;
  message: string;
}

const INSTANT = 'must be an RFC 3339 date-time with an offset, e.g. 2026-12-01T18:00:00Z';
const KIND: Partial<Record<number, string>> = {
  [ValueErrorType.String]: 'must be a string',
  [ValueErrorType.Integer]: 'must be an integer',
  [ValueErrorType.Number]: 'must be a number',
  [ValueErrorType.Boolean]: 'must be true or false',
  [ValueErrorType.Object]: 'must be an object',
  [ValueErrorType.Array]: 'must be an array',
  [ValueErrorType.Null]: 'must be null',
  [ValueErrorType.ObjectRequiredProperty]: 'is required',
  [ValueErrorType.ObjectAdditionalProperties]: 'is not a field of this object',
};

function bound(e: SchemaError): string | undefined {
  const s = e.schema as Record<string, unknown>;
  switch (e.type) {
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${s.maxLength} characters`;
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `must be at least ${s.minimum}`;
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `must be at most ${s.maximum}`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${s.maxItems} items`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${s.minItems} items`;
    default:
      return undefined;
  }
}

function union(e: SchemaError): string {
  const branches = ((e.schema as { anyOf?: TSchema[] }).anyOf ?? []) as (TSchema & {
    const?: unknown;
    type?: string;
  })[];
  const consts = branches.filter((b) => 'const' in b).map((b) => b.const);
  if (consts.length && consts.length === branches.length) return `must be one of: ${consts.join(', ')}`;
  // a nullable field: say what the value branch wants
  const values = branches.filter((b) => b.type !== 'null');
  if (values.length === 1 && values.length < branches.length) {
    const inner = Value.Errors(values[0]!, e.value).First();
    return `${inner ? fieldMessage(inner) : 'is not valid'}, or null`;
  }
  return 'does not match any of the allowed shapes';
}

function format(e: SchemaError): string {
  const f = (e.schema as { format?: string }).format;
  if (f === 'date-time')
    return typeof e.value === 'string' && parseInstant(e.value) ? `must be from ${INSTANT_RANGE}` : INSTANT;
  if (f === 'instant-any-year') return INSTANT;
  return `must be a valid ${f}`;
}

export function fieldMessage(e: SchemaError): string {
  const s = e.schema as Record<string, unknown>;
  if (e.type === ValueErrorType.StringFormat) return format(e);
  if (e.type === ValueErrorType.StringPattern && typeof e.value === 'string' && e.value.includes('\u0000'))
    return 'must not contain a NUL character (\\u0000)';
  if (e.type === ValueErrorType.StringPattern) {
    const hint = s['x-pattern-hint'] ?? s.description;
    return `is not in the expected format${hint ? ` (${hint})` : ''}`;
  }
  if (e.type === ValueErrorType.Union) return union(e);
  if (e.type === ValueErrorType.Literal) return `must be ${JSON.stringify(s.const)}`;
  return bound(e) ?? KIND[e.type] ?? e.message;
}

/**
 * Every way `value` fails `schema`, as problem `errors` under `pointer`: one per path (a union
 * reports each failing branch, and the first says enough), except that a nullable object or
 * array that is not null is looked into, so each of its bad fields is named at once.
 */
export function schemaErrors(schema: TSchema, value: unknown, pointer: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  const walk = (sch: TSchema, val: unknown, at: string) => {
    // Value.Errors is lazy: leaving the loop leaves the rest of the value unvisited
    for (const e of Value.Errors(sch, val)) {
      if (out.length >= MAX_ERRORS_SOUGHT) return;
      const path = at + e.path;
      if (seen.has(path)) continue;
      const inner = e.type === ValueErrorType.Union ? nullableBranch(e.schema, e.value) : undefined;
      if (inner) {
        walk(inner, e.value, path);
        continue;
      }
      seen.add(path);
      out.push({ path, message: fieldMessage(e) });
    }
  };
  walk(schema, value, pointer);
  return out;
}

/** The value branch of a nullable object or array, when `value` is that kind of thing (else the union's one message says it). */
function nullableBranch(schema: TSchema, value: unknown): TSchema | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const values = ((schema as { anyOf?: TSchema[] }).anyOf ?? []).filter(
    (b) => (b as { type?: string }).type !== 'null',
  );
  const t = (values[0] as { type?: string } | undefined)?.type;
  if (values.length !== 1) return undefined;
  return (t === 'object' && !Array.isArray(value)) || (t === 'array' && Array.isArray(value)) ? values[0] : undefined;
}
