/**
 * A webhook's body: the event as `GET /v1/events/{eventId}` serves it (docs/design/events.md), built from its
 * row. The same bytes for every endpoint and every retry: jsonb reads back with its keys in one
 * order, and the rest is fixed here.
 */
import { iso } from '../../time';

export interface EventRow {
  id: string;
  type: string;
  createdAt: Date;
  data: unknown;
  requestId: string | null;
}

export const eventBody = (e: EventRow): string =>
  JSON.stringify({ id: e.id, type: e.type, createdAt: iso(e.createdAt), data: e.data, requestId: e.requestId });
