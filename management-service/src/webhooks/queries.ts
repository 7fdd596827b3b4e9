/**
 * The dispatcher's SQL (docs/design/webhooks.md), every statement short:
 * - fan-out: events past the cursor, in the feed's (xid, seq) order and only below the snapshot's
 *   xmin (no transaction that could still add an earlier event is in flight), become one delivery
 *   per enabled endpoint subscribed to the type whose enabling did not see the event (it committed
 *   after the endpoint was created or re-enabled); the cursor moves in the same transaction, under
 *   the cursor row's lock. A studio whose tenant (a studio and its sandboxes) is past its pending budget, or past its
 *   turn in the transaction, is deferred, and caught up later in turns.
 * - claim: due deliveries in turns by tenant, then by endpoint, `FOR UPDATE SKIP LOCKED`, leased (in flight until
 *   the lease's end; a dispatcher killed mid-attempt leaves it due again then).
 * - record: the attempt, the delivery's next state and the endpoint's health, the delivery's state
 *   only while the lease is still this dispatcher's.
 */

import { newId } from '@studio/shared';
import type { Db, Sql } from '@studio/shared/io';
import type { DeliveryRow } from '@studio/shared/webhooks';
import {
  DISABLE_AFTER_FAILING_MS,
  disableEndpointIn,
  type EndpointRow,
  tenantPendingCount,
} from '@studio/shared/webhooks';
import type postgres from 'postgres';
import type { AttemptResult } from './send';

/** Events read by one fan-out transaction, at most. */
export const FAN_OUT_BATCH = 1000;
/** Deliveries made by one fan-out transaction, at most (an event's are never split): short transactions, whatever the burst. */
export const FAN_OUT_DELIVERIES = 2000;
/**
 * Deliveries one tenant's events make in one fan-out transaction, at most (whole events): past it, the studio's later
 * events are deferred to take turns with the other studios' (`catchUpDeferred`), so a burst passes the cursor in a
 * few reads and another studio's event behind it waits for one short transaction, not for the burst.
 */
export const FAN_OUT_TURN = 500;
/** Why a studio's events wait: its tenant is at its pending budget, or its burst takes turns with the others'. */
type DeferReason = 'budget' | 'turn';
/** A deferred studio's row: its events after (afterXid, afterSeq) in the feed's order wait, and why. */
interface Deferred {
  studioId: string;
  afterXid: string;
  afterSeq: string;
  reason: DeferReason;
}
const RETENTION_BATCH = 1000;
/** Deliveries per insert statement (5 parameters each, well under the protocol's 65,535). */
const INSERT_ROWS = 2000;

interface ExpandedRow {
  studioId: string;
  eventId: string;
  type: string;
  xid: string;
  seq: string;
  endpointId: string | null;
}

/**
 * The events `ev` (a subquery of events' rows), each with the endpoints it is delivered to (a row with no endpoint
 * when there is none): enabled, subscribed to its type, and enabled before it committed (their enabling did not see
 * it), in the feed's order.
 */
const expanded = (tx: Db, ev: postgres.PendingQuery<postgres.Row[]>) => tx<ExpandedRow[]>`
  with ev as (${ev})
  select ev.studio_id, ev.id as event_id, ev.type, ev.xid::text, ev.seq, e.id as endpoint_id
  from ev left join webhook_endpoints e
    on e.studio_id = ev.studio_id and e.enabled
   and case when e.enabled_snapshot is null then e.enabled_at <= ev.created_at
            else not pg_visible_in_snapshot(ev.xid, e.enabled_snapshot) end
   and (e.event_types is null or ev.type = any (e.event_types))
  order by ev.xid, ev.seq`;

/** The rows of `rows` grouped by event, in order: each event with the deliveries it makes (none when no endpoint takes it). */
function byEvent(rows: ExpandedRow[]) {
  const events: { studioId: string; xid: string; seq: string; deliveries: ExpandedRow[] }[] = [];
  for (const r of rows) {
    const last = events.at(-1);
    const event =
      last && last.xid === r.xid && last.seq === r.seq
        ? last
        : events[events.push({ studioId: r.studioId, xid: r.xid, seq: r.seq, deliveries: [] }) - 1]!;
    if (r.endpointId) event.deliveries.push(r);
  }
  return events;
}

/**
 * Each studio's tenant (a studio and its sandboxes are one: `coalesce(live_studio_id, id)`, by the primary key) and
 * each of those tenants' pending deliveries, its studios' together, counted up to `budget` (`tenantPendingCount`: an
 * index-only read of at most that many entries, whatever the backlog). `pending` is keyed by tenant.
 */
async function pendingOf(tx: Db, studioIds: string[], budget: number) {
  const tenantOf = new Map<string, string>();
  const pending = new Map<string, number>();
  if (!studioIds.length) return { tenantOf, pending };
  const rows = await tx<{ studioId: string; tenantId: string; pending: number }[]>`
    with s as (
      select u.studio_id, coalesce(st.live_studio_id, st.id) as tenant_id
      from unnest(${studioIds}::text[]) as u (studio_id) join studios st on st.id = u.studio_id
    ), t as (
      select t.tenant_id, ${tenantPendingCount(tx, tx`t.tenant_id`, budget)} as pending
      from (select distinct tenant_id from s) t
    )
    select s.studio_id, s.tenant_id, t.pending from s join t using (tenant_id)`;
  for (const r of rows) {
    tenantOf.set(r.studioId, r.tenantId);
    pending.set(r.tenantId, r.pending);
  }
  return { tenantOf, pending };
}

async function insertDeliveries(tx: Db, rows: ExpandedRow[]) {
  const deliveries = rows.map((r) => ({
    studioId: r.studioId,
    id: newId('webhookDelivery'),
    endpointId: r.endpointId!,
    eventId: r.eventId,
    eventType: r.type,
  }));
  // one statement of many would pass the protocol's 65,535 parameters (5 a row), refused every round
  for (let i = 0; i < deliveries.length; i += INSERT_ROWS)
    await tx`insert into webhook_deliveries ${tx(deliveries.slice(i, i + INSERT_ROWS))} on conflict (studio_id, endpoint_id, event_id) do nothing`;
}

/**
 * What one fan-out transaction does with `events`: the deliveries it makes (up to `FAN_OUT_DELIVERIES`, whole events),
 * the studios it defers (from that event on: their tenant at its budget, or past its turn of `FAN_OUT_TURN`), and how
 * many events it passes (expanded, deferred, or of a studio already deferred, or with no endpoint). `pending` is by
 * tenant (`pendingOf`).
 */
function batchOf(
  events: ReturnType<typeof byEvent>,
  deferred: Set<string>,
  { tenantOf, pending }: Awaited<ReturnType<typeof pendingOf>>,
  budget: number,
) {
  const take: ExpandedRow[] = [];
  const defer: Deferred[] = [];
  const turns = new Map<string, number>();
  let passed = 0;
  for (const event of events) {
    const n = event.deliveries.length;
    if (n && take.length && take.length + n > FAN_OUT_DELIVERIES) break;
    passed++;
    if (!n || deferred.has(event.studioId)) continue;
    const tenant = tenantOf.get(event.studioId) ?? event.studioId;
    const before = pending.get(tenant) ?? 0;
    const turn = turns.get(tenant) ?? 0;
    if (before >= budget || (turn && turn + n > FAN_OUT_TURN)) {
      // from this event on, the studio's events wait for catchUpDeferred (just before it: seq is unique)
      deferred.add(event.studioId);
      defer.push({
        studioId: event.studioId,
        afterXid: event.xid,
        afterSeq: String(BigInt(event.seq) - 1n),
        reason: before >= budget ? 'budget' : 'turn',
      });
      continue;
    }
    pending.set(tenant, before + n);
    turns.set(tenant, turn + n);
    take.push(...event.deliveries);
  }
  return { take, defer, passed };
}

/**
 * Expands one batch of events past the cursor into deliveries. Returns how many events it moved the cursor over (0
 * when there is nothing to do, or when another dispatcher holds the cursor: that one sees the same events).
 *
 * Fair by construction: a batch stops at `FAN_OUT_DELIVERIES`, and a studio whose tenant (it and its sandboxes, or its
 * live studio and that one's sandboxes) is at its pending `budget` (WEBHOOK_PENDING_BUDGET) is deferred
 * (its events skipped, from where they begin, for `catchUpDeferred`), so the events of a studio behind another's burst
 * wait for a few short transactions, not for the burst.
 */
export async function fanOutBatch(sql: Sql, budget: number): Promise<number> {
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
    const events = byEvent(
      await expanded(
        tx,
        tx`select studio_id, id, type, xid, seq, created_at from events
          where (xid, seq) > (${cursor.lastXid}::xid8, ${cursor.lastSeq}::bigint)
            and xid < pg_snapshot_xmin(pg_current_snapshot())
          order by xid, seq
          limit ${FAN_OUT_BATCH}`,
      ),
    );
    if (!events.length) return 0;
    const studios = [...new Set(events.map((e) => e.studioId))];
    const deferred = new Set(
      (
        await tx<{ studioId: string }[]>`
          select studio_id from webhook_fanout_deferred where studio_id in ${tx(studios)}`
      ).map((r) => r.studioId),
    );
    const pending = await pendingOf(
      tx,
      studios.filter((s) => !deferred.has(s)),
      budget,
    );
    const { take, defer, passed } = batchOf(events, deferred, pending, budget);
    await insertDeliveries(tx, take);
    if (defer.length)
      await tx`
        insert into webhook_fanout_deferred (studio_id, after_xid, after_seq, reason)
        select * from unnest(${defer.map((d) => d.studioId)}::text[], ${defer.map((d) => d.afterXid)}::xid8[], ${defer.map((d) => d.afterSeq)}::bigint[], ${defer.map((d) => d.reason)}::text[])`;
    const last = events[passed - 1]!;
    await tx`update webhook_fanout_cursor set last_xid = ${last.xid}::xid8, last_seq = ${last.seq}::bigint`;
    return passed;
  });
}

/**
 * One deferred studio's turn in `tx`: its events after its row and up to the cursor, expanded while its tenant's
 * pending `count` is below `budget` and its `turn` below `share` (whole events); its row moved on, or deleted once it
 * caught up. Returns the events it expanded, whether it caught up, and the tenant's count and turn after it.
 */
async function takeTurn(
  tx: Db,
  row: Deferred,
  cursor: { lastXid: string; lastSeq: string },
  room: { budget: number; share: number; count: number; turn: number },
) {
  let { count, turn } = room;
  const events = byEvent(
    await expanded(
      tx,
      tx`select studio_id, id, type, xid, seq, created_at from events
        where studio_id = ${row.studioId} and (xid, seq) > (${row.afterXid}::xid8, ${row.afterSeq}::bigint)
          and (xid, seq) <= (${cursor.lastXid}::xid8, ${cursor.lastSeq}::bigint)
        order by xid, seq
        limit ${FAN_OUT_BATCH}`,
    ),
  );
  const take: ExpandedRow[] = [];
  let passed = 0;
  for (const event of events) {
    const n = event.deliveries.length;
    if (n && (count >= room.budget || (turn && turn + n > room.share))) break;
    passed++;
    count += n;
    turn += n;
    take.push(...event.deliveries);
  }
  await insertDeliveries(tx, take);
  const caughtUp = passed === events.length && events.length < FAN_OUT_BATCH;
  if (caughtUp) await tx`delete from webhook_fanout_deferred where studio_id = ${row.studioId}`;
  else if (passed) {
    const last = events[passed - 1]!;
    await tx`
      update webhook_fanout_deferred set after_xid = ${last.xid}::xid8, after_seq = ${last.seq}::bigint,
        turn_at = clock_timestamp(), reason = ${count >= room.budget ? 'budget' : 'turn'}
      where studio_id = ${row.studioId}`;
  }
  return { passed, caughtUp, count, turn };
}

/**
 * Expands the deferred events of studios whose tenant's backlog is below the budget, in turns: the studio that waited
 * longest for its turn first (a studio never given one, then by its last turn), each tenant up to its share (of
 * `FAN_OUT_DELIVERIES` among the tenants waiting, `FAN_OUT_TURN` at least) and all together up to `FAN_OUT_DELIVERIES`
 * in one transaction, each studio up to the cursor (beyond it the fan-out takes
 * them, once the studio's row is gone). A studio caught up loses its row, under the cursor's lock, so no event of it
 * is skipped in between; one stopped by the budget says so (`reason`: what the dashboard and the gauge show).
 * Returns how many events it expanded and studios it let go (0: nothing to do, or another dispatcher is fanning out).
 */
export async function catchUpDeferred(sql: Sql, budget: number): Promise<number> {
  const [any] = await sql`select 1 from webhook_fanout_deferred limit 1`;
  if (!any) return 0;
  return sql.begin(async (tx) => {
    const [cursor] = await tx<{ lastXid: string; lastSeq: string }[]>`
      select last_xid::text, last_seq from webhook_fanout_cursor for update skip locked`;
    if (!cursor) return 0;
    const rows = await tx<Deferred[]>`
      select studio_id, after_xid::text, after_seq, reason from webhook_fanout_deferred
      order by turn_at nulls first, deferred_at, studio_id`;
    const { tenantOf, pending } = await pendingOf(
      tx,
      rows.map((r) => r.studioId),
      budget,
    );
    // a turn: the transaction's deliveries shared among the tenants waiting below their budget, FAN_OUT_TURN at least
    const waiting = new Set(
      rows.map((r) => tenantOf.get(r.studioId) ?? r.studioId).filter((t) => (pending.get(t) ?? 0) < budget),
    );
    const share = Math.max(FAN_OUT_TURN, Math.floor(FAN_OUT_DELIVERIES / Math.max(1, waiting.size)));
    const turns = new Map<string, number>();
    const atBudget: string[] = [];
    let made = 0;
    let expandedEvents = 0;
    let caughtUp = 0;
    for (const row of rows) {
      const tenant = tenantOf.get(row.studioId) ?? row.studioId;
      const count = pending.get(tenant) ?? 0;
      if (count >= budget) {
        if (row.reason !== 'budget') atBudget.push(row.studioId);
        continue;
      }
      if (made + share > FAN_OUT_DELIVERIES) break; // a whole turn or none: the next transaction begins with it
      const turn = turns.get(tenant) ?? 0;
      if (turn >= share) continue;
      const took = await takeTurn(tx, row, cursor, { budget, share, count, turn });
      pending.set(tenant, took.count); // the tenant's next deferred studio counts these too
      turns.set(tenant, took.turn);
      made += took.turn - turn;
      expandedEvents += took.passed;
      if (took.caughtUp) caughtUp++;
    }
    if (atBudget.length)
      await tx`update webhook_fanout_deferred set reason = 'budget' where studio_id in ${tx(atBudget)}`;
    return expandedEvents + caughtUp;
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
  /** The delivery's tenant: its studio's live studio (a sandbox's), or the studio itself. */
  tenantId: string;
  endpointEnabled: boolean;
  eventFound: boolean;
  eventCreatedAt: Date | null;
  eventData: unknown;
  requestId: string | null;
  traceId: string | null;
}

/**
 * Up to `limit` due deliveries, none of the `busy` endpoints' or `busyTenants`', leased to `lease` for `leaseMs`: taken
 * in turns by tenant (a studio and its sandboxes are one: `coalesce(live_studio_id, id)`), a tenant's first before any
 * tenant's second (the tenant whose oldest due delivery is oldest first), and within a tenant its endpoints' (the live
 * studio's and its sandboxes') in turns, so no tenant's deliveries wait behind another's backlog, nor one endpoint's
 * behind another's, and a studio with four sandboxes takes one turn, not five. Each tenant's share of the limit is
 * split among its endpoints, at most `perEndpoint` each. Each claim says its tenant (`tenantId`); its rows stay keyed
 * by their own studio.
 *
 * The (studio, endpoint) pairs with pending deliveries are found by a loose index scan (one probe of the pending index
 * per pair), each due pair's tenant by the studio's primary key (2 µs a pair), and each due pair's oldest due
 * deliveries from the same index, its share each; never a read of the backlog in one order. The whole claim with 2,016
 * pairs and 140,000 pending: 40–42 ms on the 2-core VM under load (31–34 ms by studio; docs/design/webhooks.md).
 */
export function claimDue(
  sql: Db,
  o: { limit: number; perEndpoint: number; busy: string[]; busyTenants: string[]; lease: string; leaseMs: number },
) {
  return sql<Claimed[]>`
    with recursive pairs as (
      (select studio_id, endpoint_id, next_attempt_at as first_due from webhook_deliveries
        where status = 'pending' order by studio_id, endpoint_id, next_attempt_at limit 1)
      union all
      select n.* from pairs p cross join lateral (
        select studio_id, endpoint_id, next_attempt_at from webhook_deliveries
        where status = 'pending' and (studio_id, endpoint_id) > (p.studio_id, p.endpoint_id)
        order by studio_id, endpoint_id, next_attempt_at limit 1) n
    ), due_pairs as materialized (
      select * from pairs where first_due <= now() and endpoint_id <> all (${o.busy}::text[])
    ), live as materialized (
      select l.*, t.tenant_id, count(*) over (partition by t.tenant_id) as tenant_pairs
      from due_pairs l join studios st on st.id = l.studio_id
      cross join lateral (select coalesce(st.live_studio_id, st.id) as tenant_id) t
      where t.tenant_id <> all (${o.busyTenants}::text[])
    ), share as (
      select ceil(${o.limit}::numeric / greatest(1, count(*))) as per_tenant from (select distinct tenant_id from live) t
    ), due as (
      select x.*, l.first_due, l.tenant_id from live l cross join lateral (
        select d.studio_id, d.endpoint_id, d.id, d.next_attempt_at from webhook_deliveries d
        where d.studio_id = l.studio_id and d.endpoint_id = l.endpoint_id and d.status = 'pending' and d.next_attempt_at <= now()
        order by d.next_attempt_at
        limit least(${o.perEndpoint}::int, ceil((select per_tenant from share) / l.tenant_pairs))::int
        for update skip locked) x
    ), turns as (
      select tenant_id, studio_id, id,
        row_number() over (partition by tenant_id order by turn, first_due, studio_id, endpoint_id) as tenant_turn,
        min(first_due) over (partition by tenant_id) as tenant_first
      from (select *, row_number() over (partition by studio_id, endpoint_id order by next_attempt_at) as turn from due) t
    ), chosen as (
      select tenant_id, studio_id, id, row_number() over (order by tenant_turn, tenant_first, tenant_id) as n from turns
      order by tenant_turn, tenant_first, tenant_id
      limit ${o.limit}
    ), claimed as (
      update webhook_deliveries d set lease = ${o.lease}, next_attempt_at = now() + ${o.leaseMs}::int * interval '1 millisecond'
      from chosen where d.studio_id = chosen.studio_id and d.id = chosen.id
      returning d.*, chosen.n, chosen.tenant_id
    )
    select c.tenant_id, c.studio_id, c.id, c.endpoint_id, c.event_id, c.event_type, c.payload, c.round_attempts, c.created_at,
      e.url, e.enabled as endpoint_enabled, e.failing_since, e.secret_ciphertext, e.secret_key_id,
      e.previous_secret_ciphertext, e.previous_secret_key_id, e.previous_secret_until,
      ev.id is not null as event_found, ev.created_at as event_created_at, ev.data as event_data, ev.request_id, ev.trace_id
    from claimed c
    join webhook_endpoints e on e.studio_id = c.studio_id and e.id = c.endpoint_id
    left join events ev on ev.studio_id = c.studio_id and ev.id = c.event_id
    order by c.n`;
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
 * The gauges: pending deliveries, the studios whose fan-out is deferred (their tenant past its pending budget), and how long the
 * oldest undelivered change has waited (a pending delivery, an event the fan-out has not reached yet, or a deferred one).
 */
export async function pendingStats(
  sql: Sql,
): Promise<{ pending: number; deferredStudios: number; oldestSeconds: number }> {
  const [row] = await sql<{ pending: number; deferredStudios: number; oldestSeconds: number }[]>`
    select (select count(*) from webhook_deliveries where status = 'pending')::int as pending,
      (select count(*) from webhook_fanout_deferred where reason = 'budget')::int as deferred_studios,
      coalesce(greatest(
        (select extract(epoch from now() - min(created_at)) from webhook_deliveries where status = 'pending'),
        (select extract(epoch from now() - ev.created_at) from events ev
          where (ev.xid, ev.seq) > ((select last_xid from webhook_fanout_cursor), (select last_seq from webhook_fanout_cursor))
          order by ev.xid, ev.seq limit 1),
        (select extract(epoch from now() - min(first.created_at)) from webhook_fanout_deferred d
          cross join lateral (select ev.created_at from events ev
            where ev.studio_id = d.studio_id and (ev.xid, ev.seq) > (d.after_xid, d.after_seq)
            order by ev.xid, ev.seq limit 1) first)
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
