import { AppError, clampInstant, iso, MAX_INSTANT_MS, parseInstant, problems, quote } from '@studio/shared';

/**
 * A body instant that must be in the future (the schema has checked that it is an instant). Each
 * operation answers a past one with its own code: `occurrence_in_past` for an occurrence's start,
 * `validation_failed` naming the field for anything else (a coupon's expiry).
 */
export function futureInstant(text: string, path: string, code: 'occurrence_in_past' | 'validation_failed'): Date {
  const at = parseInstant(text)!;
  if (at.getTime() > Date.now()) return at;
  if (code === 'validation_failed') throw problems.invalidFields([{ path, message: 'must be in the future' }]);
  const field = path.slice(path.lastIndexOf('/') + 1);
  throw new AppError(code, { detail: `${field} ${quote(text)} is not in the future.` });
}

/**
 * An instant derived from the body (an occurrence's end, a recurrence's last start) must stay inside
 * the range body instants are held to (docs/design/hostile-callers.md), else 422 naming the field that pushed it out.
 */
export function requireStorable(ms: number, path: string, what: string) {
  if (ms > MAX_INSTANT_MS)
    throw problems.invalidFields([
      { path, message: `${what} would be after ${iso(MAX_INSTANT_MS)}, the last instant the API holds` },
    ]);
}

/**
 * A filter instant in canonical UTC ms, so a cursor compares its filters by value (the schema has checked it),
 * moved into 1970..9999 (docs/design/hostile-callers.md): `from=0000-…` means "from the start", as it always did, not a 500.
 */
export const filterInstant = (text: string | undefined) =>
  text === undefined ? undefined : clampInstant(parseInstant(text)!).toISOString();
