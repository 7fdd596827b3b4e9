import { clampInstant, type FieldError, parseInstant, problems } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import type { StorefrontClassList, StorefrontClassQuery } from '@studio/shared/schemas';
import { upcomingOccurrences } from './queries';

const DAY_MS = 86_400_000;

export const DEFAULT_WINDOW_DAYS = 14;
export const MAX_WINDOW_DAYS = 90;
export const MAX_CLASSES = 500;

/**
 * storefrontListClasses rules (docs/design/storefront.md): the window starts at `from` (never
 * before now: past occurrences are not public), ends at `to` (default from + 14 days, at most
 * from + 90 days). The query schema has already checked the shapes; this checks meaning.
 */
export async function listClasses(
  sql: Sql,
  studioId: string,
  q: StorefrontClassQuery,
  now = new Date(),
): Promise<StorefrontClassList> {
  // the query schema has checked that both are instants; the window is judged as sent, and only then is any year
  // moved into 1970..9999 for the database (docs/design/hostile-callers.md), so no window that was valid is refused
  const sentFrom = q.from === undefined ? now : parseInstant(q.from)!;
  const sentTo = q.to === undefined ? new Date(sentFrom.getTime() + DEFAULT_WINDOW_DAYS * DAY_MS) : parseInstant(q.to)!;
  const errors: FieldError[] = [];
  if (sentTo.getTime() <= sentFrom.getTime()) errors.push({ path: '/query/to', message: 'must be after from' });
  else if (sentTo.getTime() > sentFrom.getTime() + MAX_WINDOW_DAYS * DAY_MS)
    errors.push({ path: '/query/to', message: `must be at most ${MAX_WINDOW_DAYS} days after from` });
  if (errors.length) throw problems.invalidFields(errors);

  const [from, to] = [clampInstant(sentFrom), clampInstant(sentTo)];
  const start = from.getTime() < now.getTime() ? now : from;
  if (to.getTime() <= start.getTime()) return { classes: [] };
  const classes = await upcomingOccurrences(sql, studioId, {
    from: start,
    to,
    discipline: q.discipline,
    level: q.level,
    instructorId: q.instructorId,
    limit: MAX_CLASSES,
  });
  return { classes };
}
