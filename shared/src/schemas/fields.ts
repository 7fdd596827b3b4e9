/** Field schemas and checks shared by several resource schemas (money, time zones, pages). */
import { FormatRegistry, Type as t, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FieldError } from '../problem';
import { isInstant } from '../time';
import { fieldMessage } from '../validation';

export const Nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()]);

/** A Management list page (contract §6). */
export const Page = <T extends TSchema>(item: T) =>
  t.Object({ data: t.Array(item), next_cursor: Nullable(t.String({ description: 'Opaque cursor of the next page; null on the last page.' })) });

// Elysia registers a looser 'date-time' (it reads 2027-02-30 as 2 March) when it loads; importing it
// first makes the registration below the one every validator uses, Elysia's and ours alike.
import 'elysia';
FormatRegistry.Set('date-time', isInstant);

/** Every input instant: RFC 3339 with an offset, a real calendar date (`parseInstant`), else 422 naming the field. */
export const Instant = t.String({
  format: 'date-time',
  description: 'RFC 3339 date-time with an offset, e.g. 2026-12-01T18:00:00Z or 2026-12-01T19:00:00+01:00',
});

/**
 * ISO 8601 UTC with milliseconds, as every record writes its timestamps. Documented as
 * `format: date-time` (and checked so by the tests' strict ajv); at run time it is not
 * re-parsed, since every one is written by `iso()`: the format check cost 30 µs per list page.
 */
const TIMESTAMP = 'ISO 8601 UTC with milliseconds, e.g. 2026-12-01T18:00:00.000Z';
export const Timestamp = t.String({ description: TIMESTAMP, 'x-doc': { type: 'string', format: 'date-time', description: TIMESTAMP } });

/** The shape of an ISO 4217 code; `isCurrency` checks that the code really exists. */
export const CurrencyCode = t.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code, e.g. USD' });
/** Integer minor units (cents); the upper bound keeps amounts inside a Postgres integer. */
export const MAX_MINOR_UNITS = 2_147_483_647;

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
export const isCurrency = (code: string) => CURRENCIES.has(code);

/** The canonical IANA name of a time zone (`utc` -> `UTC`), or null when it is not one. */
export function canonicalTimeZone(tz: string): string | null {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * Every way `value` fails `schema`, as problem `errors` under `pointer` (one per path: a union
 * reports each failing branch, and the first says enough).
 */
export function schemaErrors(schema: TSchema, value: unknown, pointer: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of Value.Errors(schema, value)) {
    const path = pointer + e.path;
    if (seen.has(path)) continue;
    seen.add(path);
    out.push({ path, message: fieldMessage(e) });
  }
  return out;
}
