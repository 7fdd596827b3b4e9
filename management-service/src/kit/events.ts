/**
 * The outbox (docs/design/events.md): what a write's action returns beside its
 * record, and how the write runner records it in the write's own transaction. Actions never
 * insert events: they say what changed (`event`, `updated`, `unchanged`), and the runner, which
 * checks each type against the operation's registry row, inserts them.
 */
import { type EventType, newId, resourceOf } from '@studio/shared';
import type { Db } from '@studio/shared/io';

/** One event of a write, before it is recorded. */
export interface Emitted<T extends EventType = EventType> {
  readonly type: T;
  /** The resource after the change, exactly as its GET returns it. */
  readonly object: object;
  /** Only on `*.updated` / `*.rescheduled`: the old value of each field that changed. */
  readonly previousAttributes?: Record<string, unknown>;
}

/** What a write's action returns: the record its operation answers with, and the events of its change. */
export interface Written<R, T extends EventType = EventType> {
  readonly record: R;
  /** None when the write changed nothing (a PATCH to the same values, a second cancel). */
  readonly events: readonly Emitted<T>[];
}

export const event = <T extends EventType>(type: T, object: object): Emitted<T> => ({ type, object });

/** The answer of a write that changed nothing: its record, and no event. */
export const unchanged = <R>(record: R): Written<R, never> => ({ record, events: [] });

/** JSON with object keys sorted, so two values compare by content. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );

/** Whether two JSON values are the same (object keys in any order). */
export const sameJson = (a: unknown, b: unknown): boolean => a === b || canonical(a) === canonical(b);

/** The fields of a patch that are sent (not undefined) and differ from the current record's: what an update must write. */
export function changedFields<T extends object>(current: T, patch: Partial<T>): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(patch) as [keyof T, T[keyof T]][]) {
    if (v !== undefined && !sameJson(current[k], v)) out[k] = v;
  }
  return out;
}

/** `previousAttributes`: the old value of each field that differs between the two states, `updatedAt` aside; null when none does. */
export function previousAttributes(before: object, after: object): Record<string, unknown> | null {
  const old = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(old)) if (k !== 'updatedAt' && !sameJson(old[k], now[k])) out[k] = old[k];
  return Object.keys(out).length ? out : null;
}

/** An update's event (`*.updated`, `*.rescheduled`) with what changed; none when nothing did. */
export function updated<T extends EventType>(type: T, before: object, after: object): Emitted<T>[] {
  const previous = previousAttributes(before, after);
  return previous ? [{ type, object: after, previousAttributes: previous }] : [];
}

export interface EventOrigin {
  requestId: string | null;
  traceId: string | null;
}

/** Rows per insert statement: well under the bind-parameter limit (a class of 365 occurrences records 366 events). */
const CHUNK = 500;

/**
 * Records events in the caller's transaction (their xid is the transaction's, `seq` follows the
 * order given) and notifies `studio_events`, which Postgres delivers at commit: the webhook
 * dispatchers wake then, and never for a write that rolled back. The one insert of the outbox:
 * the write runner and the feed's ordering test both call it.
 */
export async function insertEvents(
  tx: Db,
  studioId: string,
  events: readonly Emitted[],
  origin: EventOrigin,
): Promise<string[]> {
  if (!events.length) return [];
  const rows = events.map((e) => ({
    studioId,
    id: newId('event'),
    type: e.type,
    resource: resourceOf(e.type),
    data: tx.json(
      (e.previousAttributes
        ? { object: e.object, previousAttributes: e.previousAttributes }
        : { object: e.object }) as never,
    ),
    requestId: origin.requestId,
    traceId: origin.traceId,
  }));
  for (let i = 0; i < rows.length; i += CHUNK) await tx`insert into events ${tx(rows.slice(i, i + CHUNK))}`;
  await tx`select pg_notify('studio_events', '')`;
  return rows.map((r) => r.id);
}
