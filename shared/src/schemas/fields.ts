/** Field schemas and checks shared by several resource schemas (money, time zones, pages). */
import { FormatRegistry, type StringOptions, type TSchema, Type as t } from '@sinclair/typebox';
import { INSTANT_RANGE, isInstant, isStorableInstant } from '../time';

export const Nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()]);

/**
 * docs/design/hostile-callers.md: every string has a bound, and no text holds NUL (Postgres text cannot, so it
 * would be a 500 from the database): `NO_NUL` is a pattern, so it is documented and 422.
 */
export const NO_NUL = '^[^\\u0000]*$';
/** Every id, in a body, a query or a path. */
export const MAX_ID_LENGTH = 64;
/** A cursor carries the list, the studio, a sort key, an id and the filters (ids ≤ 64): a few hundred characters. */
export const MAX_CURSOR_LENGTH = 1024;
/**
 * A paging value as sent (`cursor`, `limit`): never refused for its length, since a limit is clamped and a cursor
 * that is not ours is 400 `invalid_cursor` (docs/design/pagination.md). Bun refuses a request whose line and
 * headers pass 16 KiB (431), so no value that arrives is longer than this.
 */
export const MAX_PAGING_VALUE_LENGTH = 16 * 1024;
export const MAX_URL_LENGTH = 2048;
/** http(s) only: a URL the Storefront serves to public pages must not be `javascript:` or `data:` (any letter case). */
const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\u0000]+$';
/** An http(s) URL sent by a caller, shown on studios' public pages (an instructor's photo). */
export const HttpUrl = (description = 'An http:// or https:// URL') =>
  t.String({ format: 'uri', maxLength: MAX_URL_LENGTH, pattern: HTTP_URL_PATTERN, description });
/**
 * An e-mail address, the same rule wherever one is sent (an instructor's, a member's invite): something@domain, no
 * spaces, any script (`tomás@lotus.example` is an address). `x-pattern-hint` is what a 422 says it should look like;
 * `description` stays the field's documentation.
 */
/** The longest e-mail address (RFC 5321's path limit less its brackets). */
export const EMAIL_MAX = 254;
export const Email = (description?: string) =>
  t.String({
    maxLength: EMAIL_MAX,
    pattern: '^[^@\\s\\u0000]+@[^@\\s\\u0000]+$',
    'x-pattern-hint': 'an e-mail address, such as ana@lotus.example',
    ...(description ? { description } : {}),
  });
/**
 * The one form a member's address is stored in (the dashboard's invite, the API's, the CLI's first admin): NFC, so é
 * typed or composed is one address; lower-cased; and NFC again, since lower-casing can undo it (J and a combining
 * caron become j and the caron, which NFC makes one character). Lower-casing can also lengthen it (İ becomes i and a
 * combining dot): check the length of this form, not of what was sent.
 */
export const emailForm = (email: string): string => email.trim().normalize('NFC').toLowerCase().normalize('NFC');
/** Free text of at most `maxLength` characters, without NUL. */
export const Text = (maxLength: number, o: StringOptions = {}) => t.String({ pattern: NO_NUL, ...o, maxLength });
/** An id sent by a caller: 1..64 characters without NUL (what it must name is the service's rule). */
export const Id = (description?: string) =>
  t.String({ minLength: 1, maxLength: MAX_ID_LENGTH, pattern: NO_NUL, ...(description ? { description } : {}) });
/** An id the API answers with (`cls_…`). */
export const IdOut = (description?: string) =>
  t.String({ maxLength: MAX_ID_LENGTH, ...(description ? { description } : {}) });

/** A Management list page (docs/design/pagination.md); at most 100 records (`limit` is clamped to 1..100). */
export const Page = <T extends TSchema>(item: T) =>
  t.Object({
    data: t.Array(item, { maxItems: 100 }),
    next_cursor: Nullable(
      t.String({ maxLength: MAX_CURSOR_LENGTH, description: 'Opaque cursor of the next page; null on the last page.' }),
    ),
  });

// Elysia registers a looser 'date-time' (it reads 2027-02-30 as 2 March) when it loads; importing it
// first makes the registration below the one every validator uses, Elysia's and ours alike.
import 'elysia';

FormatRegistry.Set('date-time', isStorableInstant);
/** Query instants take any year and are clamped into the range by the handler (`clampInstant`), so no filter that worked is refused. */
export const ANY_YEAR_INSTANT = 'instant-any-year';
FormatRegistry.Set(ANY_YEAR_INSTANT, isInstant);
/** Longer than any RFC 3339 instant (35 characters with nine fraction digits and an offset). */
const MAX_INSTANT_LENGTH = 64;

/** Every body instant: RFC 3339 with an offset, a real calendar date (`parseInstant`), in years 1970..9999, else 422 naming the field. */
export const Instant = t.String({
  format: 'date-time',
  maxLength: MAX_INSTANT_LENGTH,
  description: `RFC 3339 date-time with an offset, e.g. 2026-12-01T18:00:00Z or 2026-12-01T19:00:00+01:00; from ${INSTANT_RANGE}`,
});

/** A query instant: documented as a date-time; any year is taken and moved into the range. */
export const QueryInstant = (description: string) =>
  t.String({
    format: ANY_YEAR_INSTANT,
    maxLength: MAX_INSTANT_LENGTH,
    description,
    'x-doc': { type: 'string', format: 'date-time', maxLength: MAX_INSTANT_LENGTH, description },
  });

/**
 * ISO 8601 UTC with milliseconds, as every record writes its timestamps. Documented as
 * `format: date-time` (and checked so by the tests' strict ajv); at run time it is not
 * re-parsed, since every one is written by `iso()`: the format check cost 30 µs per list page.
 */
const TIMESTAMP = 'ISO 8601 UTC with milliseconds, e.g. 2026-12-01T18:00:00.000Z';
export const Timestamp = t.String({
  maxLength: 32,
  description: TIMESTAMP,
  'x-doc': { type: 'string', format: 'date-time', maxLength: 32, description: TIMESTAMP },
});

/** The shape of an ISO 4217 code; `isCurrency` checks that the code really exists. */
export const CurrencyCode = t.String({
  pattern: '^[A-Z]{3}$',
  maxLength: 3,
  description: 'ISO 4217 currency code, e.g. USD',
});
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

/** Every way `value` fails `schema`, as problem `errors` under `pointer` (validation.ts). */
export { schemaErrors } from '../validation';
