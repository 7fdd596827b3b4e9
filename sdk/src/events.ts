/**
 * Following the change feed (docs/design/events.md): every event after `after`, in the feed's order, then new ones as
 * they come, polling with backoff while there are none (and through an outage). Store the id of each event you handled; a follower started
 * again with `after` that id resumes there, missing and repeating nothing.
 */
import { StudioApiError } from './errors.js';
import type { StudioEvent } from './webhooks.js';

export interface FollowOptions {
  /** The id of the last event handled; omitted: from the oldest event the feed keeps. */
  after?: string;
  /** Only events of these types. */
  types?: readonly string[];
  /** Stops the follower: the loop ends (no error) once it is aborted. */
  signal?: AbortSignal;
  /** The first wait when the feed has nothing new (ms, default 1000), doubled up to `maxInterval` (default 30000). */
  interval?: number;
  maxInterval?: number;
}

type EventPage = { data: StudioEvent[]; next_cursor: string | null };
export type ListEvents = (query: Record<string, unknown>, signal?: AbortSignal) => Promise<EventPage>;

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

const transient = (err: unknown) =>
  err instanceof StudioApiError && (err.status === undefined || err.status === 429 || err.status >= 500);

export async function* follow(list: ListEvents, o: FollowOptions = {}): AsyncGenerator<StudioEvent> {
  const first = o.interval ?? 1000;
  const max = o.maxInterval ?? 30_000;
  let after = o.after;
  let cursor: string | null = null;
  let wait = first;
  while (!o.signal?.aborted) {
    let page: EventPage;
    try {
      page = await list(
        cursor
          ? { cursor, limit: 100 }
          : { limit: 100, ...(after ? { after } : {}), ...(o.types?.length ? { type: o.types.join(',') } : {}) },
        o.signal,
      );
    } catch (err) {
      if (o.signal?.aborted) return;
      // an outage outlasting the call's own retries: wait and ask again, as when the feed is quiet; a refusal
      // (a revoked key, an `after` retention deleted) is the caller's to handle
      if (!transient(err)) throw err;
      await pause(wait, o.signal);
      wait = Math.min(wait * 2, max);
      continue;
    }
    for (const event of page.data) {
      yield event;
      after = event.id;
      if (o.signal?.aborted) return;
    }
    // a filtered page may be short, even empty, while the feed goes on: its cursor goes on from where it read;
    // at the end (null) the next poll asks for what came after the last event
    cursor = page.next_cursor;
    if (page.data.length > 0 || cursor) {
      wait = first;
      continue;
    }
    await pause(wait, o.signal);
    wait = Math.min(wait * 2, max);
  }
}
