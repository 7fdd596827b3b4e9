/**
 * An endpoint's delivery log, its test event and replays (docs/design/webhooks.md): what the dashboard's
 * Webhooks page and the CLI call. The dispatcher (management-service/src/webhooks/) does the sending.
 */

import { TEST_EVENT_TYPE } from '../../event-types';
import { newId } from '../../ids';
import { AppError } from '../../problem';
import { iso, isoOrNull } from '../../time';
import type { Db, Sql } from '../db';
import { EVENTS_CHANNEL, getEndpoint } from './endpoints';

export interface DeliveryRow {
  studioId: string;
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  payload: unknown;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  roundAttempts: number;
  nextAttemptAt: Date | null;
  lease: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttemptRow {
  deliveryId: string;
  at: Date;
  statusCode: number | null;
  durationMs: number;
  response: string | null;
  error: string | null;
}

const attemptJson = (a: AttemptRow) => ({
  at: iso(a.at),
  statusCode: a.statusCode,
  durationMs: a.durationMs,
  response: a.response,
  error: a.error,
});

export const deliveryJson = (d: DeliveryRow, attempts: AttemptRow[] = []) => ({
  id: d.id,
  endpointId: d.endpointId,
  /** The `webhook-id` header: the same on every attempt. */
  eventId: d.eventId,
  eventType: d.eventType,
  status: d.status,
  /** An attempt is being made right now (another may follow, when it fails). */
  inFlight: d.lease !== null,
  /** While pending and not in flight: when the next attempt is due. */
  nextAttemptAt: d.status === 'pending' && d.lease === null ? isoOrNull(d.nextAttemptAt) : null,
  createdAt: iso(d.createdAt),
  /** Oldest first. */
  attempts: attempts.map(attemptJson),
});
export type DeliveryJson = ReturnType<typeof deliveryJson>;

const notifyDispatchers = (sql: Db) => sql`select pg_notify(${EVENTS_CHANNEL}, '')`;

/**
 * Sends the endpoint a `webhook.test` event now (whatever types it subscribes to), signed like
 * every delivery. It is not an event of the feed: its body is kept with the delivery.
 */
export async function sendTestEvent(sql: Sql, endpointId: string, studioId?: string): Promise<DeliveryJson> {
  const endpoint = await getEndpoint(sql, endpointId, studioId);
  if (!endpoint.enabled)
    throw new AppError('conflict', { detail: `${endpointId} is disabled; enable it before sending a test event` });
  const data = {
    object: {
      endpointId: endpoint.id,
      url: endpoint.url,
      message: 'A test event: your endpoint receives and verifies webhooks.',
    },
  };
  const [row] = await sql<DeliveryRow[]>`
    insert into webhook_deliveries ${sql({
      studioId: endpoint.studioId,
      id: newId('webhookDelivery'),
      endpointId: endpoint.id,
      eventId: newId('event'),
      eventType: TEST_EVENT_TYPE,
      payload: data as never,
      nextAttemptAt: new Date(),
    })}
    returning *`;
  await notifyDispatchers(sql);
  return deliveryJson(row!);
}

/** One page of an endpoint's deliveries, newest first, each with its attempts; `before` is the last id of the previous page. */
export async function listDeliveries(
  sql: Sql,
  studioId: string,
  endpointId: string,
  options: { limit?: number; before?: string } = {},
) {
  await getEndpoint(sql, endpointId, studioId);
  const limit = Math.min(100, Math.max(1, options.limit ?? 25));
  const before = options.before
    ? sql`and (created_at, id) < (select created_at, id from webhook_deliveries where studio_id = ${studioId} and id = ${options.before})`
    : sql``;
  const rows = await sql<DeliveryRow[]>`
    select * from webhook_deliveries where studio_id = ${studioId} and endpoint_id = ${endpointId} ${before}
    order by created_at desc, id desc limit ${limit + 1}`;
  const page = rows.slice(0, limit);
  const attempts = page.length
    ? await sql<AttemptRow[]>`
        select delivery_id, at, status_code, duration_ms, response, error from webhook_attempts
        where studio_id = ${studioId} and delivery_id in ${sql(page.map((d) => d.id))} order by seq`
    : [];
  return {
    deliveries: page.map((d) =>
      deliveryJson(
        d,
        attempts.filter((a) => a.deliveryId === d.id),
      ),
    ),
    nextBefore: rows.length > limit ? page.at(-1)!.id : null,
  };
}

/**
 * Delivers again, from the first step of the retry schedule: any delivery, succeeded or failed (one
 * in flight is left to finish). The body is the same event; its event must still be in the feed
 * (30 days).
 */
export async function replayDelivery(sql: Sql, studioId: string, deliveryId: string): Promise<DeliveryJson> {
  const [current] = await sql<(DeliveryRow & { endpointEnabled: boolean; eventKept: boolean })[]>`
    select d.*, e.enabled as endpoint_enabled,
      d.payload is not null or exists (select 1 from events ev where ev.studio_id = d.studio_id and ev.id = d.event_id) as event_kept
    from webhook_deliveries d join webhook_endpoints e on e.studio_id = d.studio_id and e.id = d.endpoint_id
    where d.studio_id = ${studioId} and d.id = ${deliveryId}`;
  if (!current) throw new AppError('not_found', { detail: `no webhook delivery ${deliveryId}` });
  if (!current.endpointEnabled)
    throw new AppError('conflict', {
      detail: `its endpoint ${current.endpointId} is disabled; enable it before replaying`,
    });
  if (!current.eventKept)
    throw new AppError('conflict', { detail: `its event ${current.eventId} is older than the feed keeps (30 days)` });
  const [row] = await sql<DeliveryRow[]>`
    update webhook_deliveries set status = 'pending', round_attempts = 0, next_attempt_at = now(), updated_at = now()
    where studio_id = ${studioId} and id = ${deliveryId} and lease is null
    returning *`;
  await notifyDispatchers(sql);
  return deliveryJson(row ?? current);
}
