/**
 * `work`, or a rejection with what `late()` gives once `ms` have passed without it; the timer is cleared either way.
 * `late` may note the failure too (a Redis marked stalled). Whatever `work` goes on doing is the caller's to end.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, late: () => unknown): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** ISO 8601 UTC with milliseconds: `2026-12-01T18:00:00.000Z`. */
export const iso = (d: Date | string | number): string => new Date(d).toISOString();
export const isoOrNull = (d: Date | string | number | null | undefined): string | null => (d == null ? null : iso(d));

/** RFC 3339 date-time with a mandatory offset (`Z` or `±hh:mm`); the fields are range-checked by `parseInstant`. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const daysIn = (year: number, month: number) =>
  new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/**
 * THE parser of input instants (docs/design/records.md): any RFC 3339 date-time with an offset, or
 * null. Unlike `new Date`, it refuses impossible calendar dates (`2027-02-30` is not
 * 2 March) and out-of-range times and offsets, and keeps every year as written.
 */
export function parseInstant(s: string): Date | null {
  const m = RFC3339.exec(s);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59)
    return null;
  let offset = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  return new Date(d.getTime() - offset * 60_000);
}
export const isInstant = (s: string) => parseInstant(s) !== null;

/**
 * The instants the API stores and answers (docs/design/hostile-callers.md): years 1970 to 9999 in UTC. Before
 * 1970 nothing of a studio exists, and past 9999 `toISOString` writes a six-digit year that
 * is no RFC 3339 any more; Postgres refuses year 0.
 */
export const MIN_INSTANT_MS = Date.UTC(1970, 0, 1);
export const MAX_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
export const INSTANT_RANGE = '1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z';
export const inInstantRange = (ms: number) => ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;
/** A body instant: RFC 3339, a real date, and inside the range (else 422). */
export const isStorableInstant = (s: string) => {
  const d = parseInstant(s);
  return d !== null && inInstantRange(d.getTime());
};
/** A query instant moved into the range, so a filter that worked before (`from=0000-…`) still answers. */
export const clampInstant = (d: Date): Date =>
  new Date(Math.min(MAX_INSTANT_MS, Math.max(MIN_INSTANT_MS, d.getTime())));
