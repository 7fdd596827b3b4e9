/**
 * What a developer reads in `errors[].message` when a value fails its schema: the allowed
 * values, the expected format or the bound, in words, never TypeBox's internals (`should be
 * one of: 'string', 'string'`) or a raw regex. Elysia's VALIDATION errors and our own
 * schema checks (plan and coupon configs) both go through `fieldMessage`.
 */
import type { TSchema } from '@sinclair/typebox';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

export interface SchemaError {
  type: number;
  schema: TSchema;
  value: unknown;
  message: string;
}

const INSTANT = 'must be an RFC 3339 date-time with an offset, e.g. 2026-12-01T18:00:00Z';
const KIND: Partial<Record<number, string>> = {
  [ValueErrorType.String]: 'must be a string', [ValueErrorType.Integer]: 'must be an integer',
  [ValueErrorType.Number]: 'must be a number', [ValueErrorType.Boolean]: 'must be true or false',
  [ValueErrorType.Object]: 'must be an object', [ValueErrorType.Array]: 'must be an array',
  [ValueErrorType.Null]: 'must be null', [ValueErrorType.ObjectRequiredProperty]: 'is required',
  [ValueErrorType.ObjectAdditionalProperties]: 'is not a field of this object',
};

function bound(e: SchemaError): string | undefined {
  const s = e.schema as Record<string, unknown>;
  switch (e.type) {
    case ValueErrorType.StringMinLength: return s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`;
    case ValueErrorType.StringMaxLength: return `must be at most ${s.maxLength} characters`;
    case ValueErrorType.IntegerMinimum: case ValueErrorType.NumberMinimum: return `must be at least ${s.minimum}`;
    case ValueErrorType.IntegerMaximum: case ValueErrorType.NumberMaximum: return `must be at most ${s.maximum}`;
    case ValueErrorType.ArrayMaxItems: return `must have at most ${s.maxItems} items`;
    case ValueErrorType.ArrayMinItems: return `must have at least ${s.minItems} items`;
    default: return undefined;
  }
}

function union(e: SchemaError): string {
  const branches = ((e.schema as { anyOf?: TSchema[] }).anyOf ?? []) as (TSchema & { const?: unknown; type?: string })[];
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

export function fieldMessage(e: SchemaError): string {
  const s = e.schema as Record<string, unknown>;
  if (e.type === ValueErrorType.StringFormat) return s.format === 'date-time' ? INSTANT : `must be a valid ${s.format}`;
  if (e.type === ValueErrorType.StringPattern) return `is not in the expected format${s.description ? ` (${s.description})` : ''}`;
  if (e.type === ValueErrorType.Union) return union(e);
  if (e.type === ValueErrorType.Literal) return `must be ${JSON.stringify(s.const)}`;
  return bound(e) ?? KIND[e.type] ?? e.message;
}
