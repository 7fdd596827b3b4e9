/**
 * An endpoint's delivery log, its test event and replays (docs/design/webhooks.md): what the dashboard's
 * Webhooks page and the CLI call. The dispatcher (management-service/src/webhooks/) does the sending.
 */

import { TEST_EVENT_TYPE } from '../../event-types';
import { newId } from '../../ids';
import { AppError } from '../../problem';
import { iso, isoOrNull } from '../../time';
import type { Db, Sql, Tx } from '../db';
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

/**
 * A studio's webhook backlog, as its dashboard shows it: pending deliveries (counted up to `budget`,
 * WEBHOOK_PENDING_BUDGET: `atBudget` when it is reached) and, while its new events wait for the backlog to drain
 * (the fan-out deferred them), since when.
 */
export async function studioBacklog(sql: Db, studioId: string, budget: number) {
  const [row] = await sql<{ pending: number; deferredSince: Date | null }[]>`
    select (select count(*) from (select 1 from webhook_deliveries
        where studio_id = ${studioId} and status = 'pending' limit ${budget}) x)::int as pending,
      (select deferred_at from webhook_fanout_deferred where studio_id = ${studioId}) as deferred_since`;
  return { pending: row!.pending, atBudget: row!.pending >= budget, deferredSince: row!.deferredSince };
}

const notifyDispatchers = (sql: Db) => sql`select pg_notify(${EVENTS_CHANNEL}, '')`;

/**
 * Test events and replays, sent by hand, to one endpoint: `burst` at once, then `perSecond`. Each makes our servers
 * POST to an address of the studio's choosing and keeps a row.
 */
export const MANUAL_SENDS = { perSecond: 1, burst: 10 } as const;

/** The endpoint's tokens now: those of its row, refilled since (a row never used has a full bucket). */
const tokensNow = (db: Db) =>
  db`least(${MANUAL_SENDS.burst}::float8, coalesce(manual_tokens + ${MANUAL_SENDS.perSecond}::float8
    * greatest(0, extract(epoch from statement_timestamp() - manual_tokens_at)::float8), ${MANUAL_SENDS.burst}::float8))`;

/**
 * Takes one of the endpoint's manual sends in `tx`, the transaction that then makes the send, so that a refused
 * one writes nothing: one statement, whose row lock makes concurrent takes (any dashboard, the CLI) count in turn.
 * False when the endpoint is disabled (or gone); `rate_limited`, saying when the next is allowed, when none is left.
 */
async function takeManualSend(tx: Tx, studioId: string, endpointId: string): Promise<boolean> {
  const where = (db: Db) => db`studio_id = ${studioId} and id = ${endpointId}`;
  const [taken] = await tx`
    update webhook_endpoints set manual_tokens = ${tokensNow(tx)} - 1,
      manual_tokens_at = greatest(manual_tokens_at, statement_timestamp())
    where ${where(tx)} and enabled and ${tokensNow(tx)} >= 1
    returning 1`;
  if (taken) return true;
  const [state] = await tx<{ enabled: boolean; waitSeconds: number }[]>`
    select enabled, (1 - ${tokensNow(tx)}) / ${MANUAL_SENDS.perSecond}::float8 as wait_seconds
    from webhook_endpoints where ${where(tx)}`;
  if (!state?.enabled) return false;
  const wait = Math.max(0.1, Math.ceil(state.waitSeconds * 10) / 10);
  throw new AppError('rate_limited', {
    detail: `too many test events and replays to ${endpointId} (${MANUAL_SENDS.burst} at once, then ${MANUAL_SENDS.perSecond} a second): the next is allowed in ${wait} s`,
    headers: { 'retry-after': String(Math.ceil(wait)) },
  });
}

const disabledForTest = (endpointId: string) =>
  new AppError('conflict', { detail: `${endpointId} is disabled; enable it before sending a test event` });

/**
 * Sends the endpoint a `webhook.test` event now (whatever types it subscribes to), signed like
 * every delivery. It is not an event of the feed: its body is kept with the delivery.
 */
export async function sendTestEvent(sql: Sql, endpointId: string, studioId?: string): Promise<DeliveryJson> {
  const endpoint = await getEndpoint(sql, endpointId, studioId);
  if (!endpoint.enabled) throw disabledForTest(endpointId);
  const data = {
    object: {
      endpointId: endpoint.id,
      url: endpoint.url,
      message: 'A test event: your endpoint receives and verifies webhooks.',
    },
  };
  const row = await sql.begin(async (tx) => {
    if (!(await takeManualSend(tx, endpoint.studioId, endpoint.id))) throw disabledForTest(endpointId);
    const [made] = await tx<DeliveryRow[]>`
      insert into webhook_deliveries ${tx({
        studioId: endpoint.studioId,
        id: newId('webhookDelivery'),
        endpointId: endpoint.id,
        eventId: newId('event'),
        eventType: TEST_EVENT_TYPE,
        payload: data as never,
        nextAttemptAt: new Date(),
      })}
      returning *`;
    await notifyDispatchers(tx);
    return made!;
  });
  return deliveryJson(row);
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

/** What a replay of a delivery in flight throws to undo its transaction (its token) and answer the delivery as it is. */
const IN_FLIGHT = Symbol('in flight');

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
  const disabled = () =>
    new AppError('conflict', { detail: `its endpoint ${current.endpointId} is disabled; enable it before replaying` });
  if (!current.endpointEnabled) throw disabled();
  if (!current.eventKept)
    throw new AppError('conflict', { detail: `its event ${current.eventId} is older than the feed keeps (30 days)` });
  const row = await sql
    .begin(async (tx) => {
      // the endpoint's row first, then the delivery: the order the dispatcher's recording locks them in
      if (!(await takeManualSend(tx, studioId, current.endpointId))) throw disabled();
      const [queued] = await tx<DeliveryRow[]>`
        update webhook_deliveries set status = 'pending', round_attempts = 0, next_attempt_at = now(), updated_at = now()
        where studio_id = ${studioId} and id = ${deliveryId} and lease is null
        returning *`;
      if (!queued) throw IN_FLIGHT; // left to finish, and the token given back with the transaction
      await notifyDispatchers(tx);
      return queued;
    })
    .catch((err) => {
      if (err === IN_FLIGHT) return current;
      throw err;
    });
  return deliveryJson(row);
}
