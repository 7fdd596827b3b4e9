/** ISO 8601 UTC with milliseconds: `2026-12-01T18:00:00.000Z`. */
export const iso = (d: Date | string | number): string => new Date(d).toISOString();
export const isoOrNull = (d: Date | string | number | null | undefined): string | null => (d == null ? null : iso(d));

/** RFC 3339 date-time with a mandatory offset (`Z` or `±hh:mm`). */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
export function parseInstant(s: string): Date | null {
  if (!RFC3339.test(s)) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}
