/**
 * An endpoint's delivery log, its test event and replays (docs/design/webhooks.md): what the dashboard's
 * Webhooks page and the CLI call. The dispatcher (management-service/src/webhooks/) does the sending.
 */
import { AppError, iso, isoOrNull, newId, TEST_EVENT_TYPE } from '@studio/shared';
import type { Db, Sql, Tx } from '@studio/shared/io';
import type { AttemptRow, DeliveryRow } from '@studio/shared/webhooks';
import { getEndpoint } from './endpoints';
import * as q from './queries';

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
 * A studio's webhook backlog, as its dashboard shows it: its own pending deliveries (`pending`) and its tenant's
 * (`tenantPending`: with its live studio and their sandboxes, what the budget counts; the same as `pending` for a
 * studio without sandboxes), each counted up to `budget` (WEBHOOK_PENDING_BUDGET: `atBudget` when the tenant's reaches
 * it) and, while its new events wait for that backlog to drain (the fan-out deferred them), since when.
 */
export async function studioBacklog(sql: Db, studioId: string, budget: number) {
  const row = await q.studioBacklogRow(sql, studioId, budget);
  return {
    pending: row.pending,
    tenantPending: row.tenantPending,
    atBudget: row.tenantPending >= budget,
    deferredSince: row.deferredSince,
  };
}

/**
 * Test events and replays, sent by hand, to one endpoint: `burst` at once, then `perSecond`. Each makes our servers
 * POST to an address of the studio's choosing and keeps a row.
 */
export const MANUAL_SENDS = { perSecond: 1, burst: 10 } as const;

/**
 * Takes one of the endpoint's manual sends in `tx`, the transaction that then makes the send, so that a refused
 * one writes nothing: one statement, whose row lock makes concurrent takes (any dashboard, the CLI) count in turn.
 * False when the endpoint is disabled (or gone); `rate_limited`, saying when the next is allowed, when none is left.
 */
async function takeManualSend(tx: Tx, studioId: string, endpointId: string): Promise<boolean> {
  const state = await q.takeToken(tx, studioId, endpointId, MANUAL_SENDS);
  if (state === 'taken') return true;
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
    const made = await q.insertDelivery(tx, {
      studioId: endpoint.studioId,
      id: newId('webhookDelivery'),
      endpointId: endpoint.id,
      eventId: newId('event'),
      eventType: TEST_EVENT_TYPE,
      payload: data,
      nextAttemptAt: new Date(),
    });
    await q.notifyDispatchers(tx);
    return made;
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
  const rows = await q.deliveriesPage(sql, studioId, endpointId, limit, options.before);
  const page = rows.slice(0, limit);
  const attempts = await q.attemptsOf(
    sql,
    studioId,
    page.map((d) => d.id),
  );
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
  const current = await q.deliveryForReplay(sql, studioId, deliveryId);
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
      const queued = await q.requeueDelivery(tx, studioId, deliveryId);
      if (!queued) throw IN_FLIGHT; // left to finish, and the token given back with the transaction
      await q.notifyDispatchers(tx);
      return queued;
    })
    .catch((err) => {
      if (err === IN_FLIGHT) return current;
      throw err;
    });
  return deliveryJson(row);
}
