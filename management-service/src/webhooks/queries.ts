/**
 * The dispatcher's SQL (docs/design/webhooks.md), every statement short:
 * - fan-out: events past the cursor, in the feed's (xid, seq) order and only below the snapshot's
 *   xmin (no transaction that could still add an earlier event is in flight), become one delivery
 *   per enabled endpoint subscribed to the type whose enabling did not see the event (it committed
 *   after the endpoint was created or re-enabled); the cursor moves in the
 *   same transaction, under the cursor row's lock.
 * - claim: due deliveries, `FOR UPDATE SKIP LOCKED`, leased (in flight until the lease's end; a
 *   dispatcher killed mid-attempt leaves it due again then).
 * - record: the attempt, the delivery's next state and the endpoint's health, the delivery's state
 *   only while the lease is still this dispatcher's.
 */

import { newId } from '@studio/shared';
import type { Sql } from '@studio/shared/io/db';
import type { DeliveryRow } from '@studio/shared/io/webhooks/deliveries';
import { disableEndpointIn, type EndpointRow } from '@studio/shared/io/webhooks/endpoints';
import { DISABLE_AFTER_FAILING_MS } from '@studio/shared/io/webhooks/schedule';
import type { AttemptResult } from './send';

export const FAN_OUT_BATCH = 1000;
const RETENTION_BATCH = 1000;
/** Deliveries per insert statement (5 parameters each, well under the protocol's 65,535). */
const INSERT_ROWS = 2000;

/**
 * Expands one batch of events into deliveries. Returns how many events it expanded (0 when there is
 * nothing to do, or when another dispatcher holds the cursor: that one sees the same events).
 */
export async function fanOutBatch(sql: Sql): Promise<number> {
  // a read first: an idle poll locks nothing (a locked row costs a transaction id and a WAL record each second)
  // (the first event past the cursor, by the (xid, seq) index: a join with the cursor, or exists(), read them all)
  const [probe] = await sql<{ due: boolean }[]>`
    select ev.xid < pg_snapshot_xmin(pg_current_snapshot()) as due from events ev
    where (ev.xid, ev.seq) > ((select last_xid from webhook_fanout_cursor), (select last_seq from webhook_fanout_cursor))
    order by ev.xid, ev.seq limit 1`;
  if (!probe?.due) return 0;
  return sql.begin(async (tx) => {
    const [cursor] = await tx<{ lastXid: string; lastSeq: string }[]>`
      select last_xid::text, last_seq from webhook_fanout_cursor for update skip locked`;
    if (!cursor) return 0;
    const rows = await tx<
      { studioId: string; eventId: string; type: string; xid: string; seq: string; endpointId: string | null }[]
    >`
      with ev as (
        select studio_id, id, type, xid, seq, created_at from events
        where (xid, seq) > (${cursor.lastXid}::xid8, ${cursor.lastSeq}::bigint)
          and xid < pg_snapshot_xmin(pg_current_snapshot())
        order by xid, seq
        limit ${FAN_OUT_BATCH}
      )
      select ev.studio_id, ev.id as event_id, ev.type, ev.xid::text, ev.seq, e.id as endpoint_id
      from ev left join webhook_endpoints e
        on e.studio_id = ev.studio_id and e.enabled
       and case when e.enabled_snapshot is null then e.enabled_at <= ev.created_at
                else not pg_visible_in_snapshot(ev.xid, e.enabled_snapshot) end
       and (e.event_types is null or ev.type = any (e.event_types))
      order by ev.xid, ev.seq`;
    if (!rows.length) return 0;
    const deliveries = rows
      .filter((r) => r.endpointId)
      .map((r) => ({
        studioId: r.studioId,
        id: newId('webhookDelivery'),
        endpointId: r.endpointId!,
        eventId: r.eventId,
        eventType: r.type,
      }));
    // a batch makes up to FAN_OUT_BATCH x 16 deliveries; one statement of them all would pass the protocol's 65,535
    // parameters (5 a row), refused every round, and the cursor would never move again
    for (let i = 0; i < deliveries.length; i += INSERT_ROWS)
      await tx`insert into webhook_deliveries ${tx(deliveries.slice(i, i + INSERT_ROWS))} on conflict (studio_id, endpoint_id, event_id) do nothing`;
    const last = rows.at(-1)!;
    await tx`update webhook_fanout_cursor set last_xid = ${last.xid}::xid8, last_seq = ${last.seq}::bigint`;
    return new Set(rows.map((r) => r.eventId)).size;
  });
}

/** A claimed delivery with what its attempt needs: the endpoint, and the event (null: a test event, or one retention deleted). */
export interface Claimed
  extends Pick<
      EndpointRow,
      | 'url'
      | 'secretCiphertext'
      | 'secretKeyId'
      | 'previousSecretCiphertext'
      | 'previousSecretKeyId'
      | 'previousSecretUntil'
      | 'failingSince'
    >,
    Pick<
      DeliveryRow,
      'studioId' | 'id' | 'endpointId' | 'eventId' | 'eventType' | 'payload' | 'roundAttempts' | 'createdAt'
    > {
  endpointEnabled: boolean;
  eventFound: boolean;
  eventCreatedAt: Date | null;
  eventData: unknown;
  requestId: string | null;
  traceId: string | null;
}

/** Up to `limit` due deliveries, none of the `busy` endpoints' or `busyStudios`', leased to `lease` for `leaseMs`. */
export async function claimDue(
  sql: Sql,
  o: { limit: number; busy: string[]; busyStudios: string[]; lease: string; leaseMs: number },
): Promise<Claimed[]> {
  return sql<Claimed[]>`
    with due as (
      select studio_id, id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= now() and endpoint_id <> all (${o.busy}::text[])
        and studio_id <> all (${o.busyStudios}::text[])
      order by next_attempt_at
      limit ${o.limit}
      for update skip locked
    ), claimed as (
      update webhook_deliveries d set lease = ${o.lease}, next_attempt_at = now() + ${o.leaseMs}::int * interval '1 millisecond'
      from due where d.studio_id = due.studio_id and d.id = due.id
      returning d.*
    )
    select c.studio_id, c.id, c.endpoint_id, c.event_id, c.event_type, c.payload, c.round_attempts, c.created_at,
      e.url, e.enabled as endpoint_enabled, e.failing_since, e.secret_ciphertext, e.secret_key_id,
      e.previous_secret_ciphertext, e.previous_secret_key_id, e.previous_secret_until,
      ev.id is not null as event_found, ev.created_at as event_created_at, ev.data as event_data, ev.request_id, ev.trace_id
    from claimed c
    join webhook_endpoints e on e.studio_id = c.studio_id and e.id = c.endpoint_id
    left join events ev on ev.studio_id = c.studio_id and ev.id = c.event_id
    order by c.next_attempt_at`;
}

/**
 * Hands claimed deliveries back, due at once (claimed beyond an endpoint's concurrency). Found by their primary key:
 * by id alone, Postgres read every delivery (17 ms at 100,000 of them, 0.5 ms by key).
 */
export async function releaseClaims(sql: Sql, claims: Pick<Claimed, 'studioId' | 'id'>[], lease: string) {
  if (!claims.length) return;
  await sql`
    update webhook_deliveries set lease = null, next_attempt_at = now()
    where lease = ${lease}
      and (studio_id, id) in (select * from unnest(${claims.map((c) => c.studioId)}::text[], ${claims.map((c) => c.id)}::text[]))`;
}

/** A delivery that cannot be attempted (its endpoint was disabled, its event is gone): failed, without an attempt. */
export async function failClaim(sql: Sql, c: Pick<Claimed, 'studioId' | 'id'>, lease: string) {
  await sql`
    update webhook_deliveries set status = 'failed', next_attempt_at = null, lease = null, updated_at = now()
    where studio_id = ${c.studioId} and id = ${c.id} and lease = ${lease}`;
}

export const GONE_REASON = 'The endpoint answered 410 Gone.';
export const failingReason = (since: Date) =>
  `Every delivery attempt failed for 3 days (since ${since.toISOString()}).`;

export interface Recorded {
  /** The delivery's state after the attempt, or null when the lease had passed to another dispatcher. */
  status: 'pending' | 'succeeded' | 'failed' | null;
  nextAttemptAt: Date | null;
  /** Why the endpoint was disabled by this attempt, if it was. */
  disabled: string | null;
}

/**
 * Records an attempt (always: it happened) and, while the lease is still ours, the delivery's next
 * state: succeeded, due again in `retryInMs`, or failed (schedule spent, 410, endpoint disabled).
 * The endpoint's health moves with it: a success clears `failing_since`; a 410, or a failure 3 days
 * after the first of an unbroken run, disables it.
 */
export async function recordAttempt(
  sql: Sql,
  c: Claimed,
  lease: string,
  r: AttemptResult,
  retryInMs: number | null,
): Promise<Recorded> {
  return sql.begin(async (tx) => {
    let disabled: string | null = null;
    if (r.ok) {
      if (c.failingSince)
        await tx`update webhook_endpoints set failing_since = null where studio_id = ${c.studioId} and id = ${c.endpointId}`;
    } else {
      const [health] = await tx<{ failingSince: Date | null; enabled: boolean }[]>`
        with first as (
          update webhook_endpoints set failing_since = now()
          where studio_id = ${c.studioId} and id = ${c.endpointId} and failing_since is null
        )
        select failing_since, enabled from webhook_endpoints where studio_id = ${c.studioId} and id = ${c.endpointId}`;
      if (health?.enabled) {
        if (r.gone) disabled = GONE_REASON;
        else if (health.failingSince && Date.now() - health.failingSince.getTime() >= DISABLE_AFTER_FAILING_MS)
          disabled = failingReason(health.failingSince);
        if (disabled) await disableEndpointIn(tx, c.studioId, c.endpointId, disabled);
      }
    }
    const retry = !r.ok && !r.gone && retryInMs !== null;
    const [after] = await tx<{ status: Recorded['status']; nextAttemptAt: Date | null }[]>`
      update webhook_deliveries d set
        status = case when ${r.ok} then 'succeeded' when ${retry} and e.enabled then 'pending' else 'failed' end,
        next_attempt_at = case when not ${r.ok} and ${retry} and e.enabled then now() + ${retryInMs ?? 0}::bigint * interval '1 millisecond' end,
        attempts = d.attempts + 1, round_attempts = d.round_attempts + 1, lease = null, updated_at = now()
      from webhook_endpoints e
      where d.studio_id = ${c.studioId} and d.id = ${c.id} and d.lease = ${lease} and e.studio_id = d.studio_id and e.id = d.endpoint_id
      returning d.status, d.next_attempt_at`;
    // locked as the foreign key's check locks it: a delivery being deleted is waited for, then seen gone (no attempt to
    // record), where a plain exists() saw it and the check then failed the whole recording
    await tx`
      insert into webhook_attempts (studio_id, delivery_id, status_code, duration_ms, response, error)
      select ${c.studioId}, ${c.id}, ${r.statusCode}, ${r.durationMs}, ${r.response}, ${r.error}
      where exists (select 1 from webhook_deliveries where studio_id = ${c.studioId} and id = ${c.id} for key share)`;
    return { status: after?.status ?? null, nextAttemptAt: after?.nextAttemptAt ?? null, disabled };
  });
}

/**
 * Successes, the common case, recorded many at once in one statement (an attempt each, and the
 * delivery succeeded while its lease is still the claimer's). Returns the ids whose delivery it
 * marked succeeded. Each clears its endpoint's run of failures (`failing_since`), as `recordAttempt` does:
 * another delivery to the endpoint may have failed since this one was claimed.
 */
export async function recordSuccesses(
  sql: Sql,
  items: { c: Pick<Claimed, 'studioId' | 'id'>; lease: string; r: AttemptResult }[],
): Promise<Set<string>> {
  const rows = await sql<{ id: string }[]>`
    with r as (
      select * from unnest(
        ${items.map((i) => i.c.studioId)}::text[], ${items.map((i) => i.c.id)}::text[], ${items.map((i) => i.lease)}::text[],
        ${items.map((i) => i.r.statusCode)}::int[], ${items.map((i) => i.r.durationMs)}::int[], ${items.map((i) => i.r.response)}::text[]
      ) as t (studio_id, id, lease, status_code, duration_ms, response)
    ), succeeded as (
      update webhook_deliveries d set status = 'succeeded', next_attempt_at = null, attempts = d.attempts + 1,
        round_attempts = d.round_attempts + 1, lease = null, updated_at = now()
      from r where d.studio_id = r.studio_id and d.id = r.id and d.lease = r.lease
      returning d.id, d.studio_id, d.endpoint_id
    ), healthy as (
      -- a success ends its endpoint's run of failures, even one that began after this delivery was claimed
      update webhook_endpoints e set failing_since = null
      from (select distinct studio_id, endpoint_id from succeeded) s
      where e.studio_id = s.studio_id and e.id = s.endpoint_id and e.failing_since is not null
    ), logged as (
      -- the delivery another dispatcher leased meanwhile still gets its attempt; one being deleted is waited for and
      -- then seen gone (locked as the foreign key's check locks it; a row this statement updated cannot be locked again)
      insert into webhook_attempts (studio_id, delivery_id, status_code, duration_ms, response)
      select r.studio_id, r.id, r.status_code, r.duration_ms, r.response from r
      where (r.studio_id, r.id) in (select studio_id, id from succeeded)
        or exists (select 1 from webhook_deliveries x where x.studio_id = r.studio_id and x.id = r.id for key share)
    )
    select id from succeeded`;
  return new Set(rows.map((row) => row.id));
}

/**
 * The gauges: pending deliveries, and how long the oldest undelivered change has waited (a pending
 * delivery, or an event the fan-out has not reached yet).
 */
export async function pendingStats(sql: Sql): Promise<{ pending: number; oldestSeconds: number }> {
  const [row] = await sql<{ pending: number; oldestSeconds: number }[]>`
    select (select count(*) from webhook_deliveries where status = 'pending')::int as pending,
      coalesce(greatest(
        (select extract(epoch from now() - min(created_at)) from webhook_deliveries where status = 'pending'),
        (select extract(epoch from now() - ev.created_at) from events ev
          where (ev.xid, ev.seq) > ((select last_xid from webhook_fanout_cursor), (select last_seq from webhook_fanout_cursor))
          order by ev.xid, ev.seq limit 1)
      ), 0)::float8 as oldest_seconds`;
  return row!;
}

/** Attempts, and finished deliveries, older than 30 days: in batches, never one long delete. Returns how many rows went. */
export async function deleteExpired(sql: Sql): Promise<number> {
  let total = 0;
  for (;;) {
    const gone = await sql`
      delete from webhook_attempts where (studio_id, delivery_id, seq) in (
        select studio_id, delivery_id, seq from webhook_attempts where at < now() - interval '30 days'
        limit ${RETENTION_BATCH} for update skip locked)`;
    total += gone.count;
    if (gone.count < RETENTION_BATCH) break;
  }
  for (;;) {
    const gone = await sql`
      delete from webhook_deliveries where (studio_id, id) in (
        select studio_id, id from webhook_deliveries where status <> 'pending' and updated_at < now() - interval '30 days'
        limit ${RETENTION_BATCH} for update skip locked)`;
    total += gone.count;
    if (gone.count < RETENTION_BATCH) break;
  }
  return total;
}
