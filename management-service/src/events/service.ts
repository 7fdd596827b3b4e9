import {
  AppError,
  type Caller,
  EVENT_RESOURCE_SCOPES,
  EVENT_TYPES,
  idPattern,
  idTime,
  isEventType,
  problems,
  quote,
  readableResources,
} from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { Event, EventsQuery } from '@studio/shared/schemas';
import type { ManagementDeps } from '../kit/deps';
import { type Page, readPage, signCursor } from '../kit/pagination';
import { deletedBefore, eventsPage, findEvent, type Position } from './queries';

const EVENT_ID = new RegExp(idPattern('event'));
const RESOURCE_COUNT = Object.keys(EVENT_RESOURCE_SCOPES).length;

/**
 * How long after retention's cutoff an id may have been made and its event still deleted: an event's
 * `created_at` is its transaction's start, a little before its id was made. A not-found id within
 * this margin is taken as expired (a consumer resyncs, which is safe), never the reverse.
 */
const EXPIRY_MARGIN_MS = 60 * 60_000;

/** `type=a,b`: known types only (else 422), as one canonical filter for the cursor. */
function typeFilter(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const types = [...new Set(raw.split(','))].sort();
  const unknown = types.filter((t) => !isEventType(t));
  if (unknown.length) {
    throw problems.invalidFields([
      {
        path: '/query/type',
        message: `${quote(unknown.join(', '))} is not an event type; types are ${EVENT_TYPES.join(', ')}`,
      },
    ]);
  }
  return types.join(',');
}

/** The event of the studio a key may read, or null. */
async function readable(db: Db, caller: Caller, id: string) {
  if (!EVENT_ID.test(id)) return null;
  const found = await findEvent(db, caller.studioId, id);
  return found && readableResources(caller.scopes).includes(found.resource) ? found : null;
}

/**
 * Where `after=<id>` resumes: the event's place in the feed. 410 `events_expired` when the id was made
 * before retention's cutoff (plus the margin) and is gone, or is found but so near the cutoff that an
 * event after it in the feed may have been deleted (the feed runs in commit order, retention by
 * `created_at`); else 404 when not found (never an event of this studio that the key may read).
 */
async function positionAfter(db: Db, caller: Caller, id: string): Promise<Position> {
  const made = idTime('event', id);
  const [found, cutoff] = await Promise.all([readable(db, caller, id), made === null ? null : deletedBefore(db)]);
  const nearCutoff = made !== null && cutoff !== null && made < cutoff.getTime() + EXPIRY_MARGIN_MS;
  if (found && !nearCutoff) return found.at;
  if (nearCutoff && (found || !(await findEvent(db, caller.studioId, id)))) {
    throw new AppError('events_expired', {
      detail: `Event ${quote(id)} is older than the feed keeps (30 days): events after it were deleted. Resync, then resume from a recent event.`,
    });
  }
  throw problems.notFound('event', id);
}

/** GET /v1/events: the studio's feed as the key may read it, oldest first (docs/design/events.md). */
export async function listEvents(deps: ManagementDeps, caller: Caller, query: EventsQuery): Promise<Page<Event>> {
  const secret = deps.config.CURSOR_SECRET;
  const p = readPage(secret, caller, 'events', query, { type: typeFilter(query.type) });
  // a cursor carries its place and filters and wins over `after`
  const from = p.after
    ? { xid: p.after.key, seq: p.after.id }
    : query.after
      ? await positionAfter(deps.sql, caller, query.after)
      : null;
  const resources = readableResources(caller.scopes);
  const page = await eventsPage(deps.sql, caller.studioId, {
    from,
    limit: p.limit,
    types: p.filters.type?.split(',') ?? null,
    resources: resources.length === RESOURCE_COUNT ? null : resources,
  });
  const next =
    page.next &&
    signCursor(secret, { v: 1, l: 'events', s: caller.studioId, k: page.next.xid, i: page.next.seq, f: p.filters });
  return { data: page.events, next_cursor: next ?? null };
}

/** GET /v1/events/{eventId}: 404 for another studio's event and for one the key may not read. */
export async function getEvent(db: Db, caller: Caller, id: string): Promise<Event> {
  const found = await readable(db, caller, id);
  if (!found) throw problems.notFound('event', id);
  return found.event;
}
