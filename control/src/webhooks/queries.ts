/** The SQL of webhook administration (`endpoints.ts` and `deliveries.ts` hold the rules); `studio_id` first in each. */
import type { Db, Sql, Tx } from '@studio/shared/io';
import type { AttemptRow, DeliveryRow } from '@studio/shared/webhooks';
import { type EndpointRow, EVENTS_CHANNEL, tenantPendingCount } from '@studio/shared/webhooks';

const byId = (sql: Db, endpointId: string, studioId?: string) =>
  studioId ? sql`studio_id = ${studioId} and id = ${endpointId}` : sql`id = ${endpointId}`;

export async function endpointById(sql: Db, endpointId: string, studioId?: string): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`select * from webhook_endpoints where ${byId(sql, endpointId, studioId)}`;
  return row;
}

/** The studio's row locked against deletion (and against a concurrent sixteenth endpoint), or false when it is gone. */
export async function lockStudio(tx: Tx, studioId: string): Promise<boolean> {
  const [studio] = await tx`select id from studios where id = ${studioId} and deleted_at is null for no key update`;
  return Boolean(studio);
}

export async function endpointCount(tx: Tx, studioId: string): Promise<number> {
  const [row] = await tx<{ count: number }[]>`
    select count(*)::int as count from webhook_endpoints where studio_id = ${studioId}`;
  return row!.count;
}

/** The new endpoint's row, or undefined when one with its id exists already. */
export async function insertEndpoint(
  tx: Tx,
  row: Pick<EndpointRow, 'studioId' | 'id' | 'url' | 'eventTypes' | 'secretCiphertext' | 'secretKeyId'>,
): Promise<EndpointRow | undefined> {
  const [created] = await tx<EndpointRow[]>`
    insert into webhook_endpoints ${tx(row)} on conflict (studio_id, id) do nothing returning *`;
  return created;
}

export const endpointsOf = (sql: Db, studioId: string) =>
  sql<EndpointRow[]>`select * from webhook_endpoints where studio_id = ${studioId} order by created_at, id`;

/** Enabled again: it receives the events its snapshot does not see (docs/design/webhooks.md), its failures forgotten. */
export async function markEnabled(sql: Sql, e: Pick<EndpointRow, 'studioId' | 'id'>): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set enabled = true, disabled_reason = null, enabled_at = case when enabled then enabled_at else now() end,
      enabled_snapshot = case when enabled then enabled_snapshot else pg_current_snapshot() end,
      failing_since = null, updated_at = now()
    where studio_id = ${e.studioId} and id = ${e.id} returning *`;
  return row;
}

const endpointKey = (db: Db, e: Pick<EndpointRow, 'studioId' | 'id'>) => db`studio_id = ${e.studioId} and id = ${e.id}`;

export async function markDeleting(sql: Sql, e: Pick<EndpointRow, 'studioId' | 'id'>, reason: string) {
  await sql`update webhook_endpoints set enabled = false, disabled_reason = ${reason}, updated_at = now() where ${endpointKey(sql, e)} and enabled`;
}

/** Deletes up to `batch` of an endpoint's deliveries, skipping those a dispatcher holds (it never waits for one); how many went. */
export async function deleteDeliveriesBatch(sql: Sql, e: Pick<EndpointRow, 'studioId' | 'id'>, batch: number) {
  const gone = await sql`
    delete from webhook_deliveries where (studio_id, id) in (
      select studio_id, id from webhook_deliveries where studio_id = ${e.studioId} and endpoint_id = ${e.id}
      limit ${batch} for update skip locked)`;
  return gone.count;
}

/**
 * The endpoint deleted once no delivery is left: with its row locked none can be added (the foreign key's check
 * waits for the lock), so the cascade has nothing to lock. 'elsewhere': it was gone already; null: deliveries left.
 */
export function deleteEndpointIfEmpty(sql: Sql, e: Pick<EndpointRow, 'studioId' | 'id'>) {
  return sql.begin(async (tx): Promise<'here' | 'elsewhere' | null> => {
    if (!(await tx`select 1 from webhook_endpoints where ${endpointKey(tx, e)} for update`).length) return 'elsewhere';
    const [left] =
      await tx`select 1 from webhook_deliveries where studio_id = ${e.studioId} and endpoint_id = ${e.id} limit 1`;
    if (left) return null;
    await tx`delete from webhook_endpoints where ${endpointKey(tx, e)}`;
    return 'here';
  });
}

/** The secret replaced, compared with the one read before (two rolls at once cannot drop a secret a receiver holds). */
export async function replaceSecret(
  sql: Sql,
  current: EndpointRow,
  next: { ciphertext: Uint8Array; keyId: string },
  previousUntil: Date | null,
): Promise<EndpointRow | undefined> {
  const keep = previousUntil !== null;
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set
      previous_secret_ciphertext = ${keep ? current.secretCiphertext : null}, previous_secret_key_id = ${keep ? current.secretKeyId : null},
      previous_secret_until = ${previousUntil}, secret_ciphertext = ${Buffer.from(next.ciphertext)}, secret_key_id = ${next.keyId}, updated_at = now()
    where studio_id = ${current.studioId} and id = ${current.id} and secret_ciphertext = ${current.secretCiphertext}
    returning *`;
  return row;
}

/**
 * The studio's own pending deliveries and its tenant's (it, its live studio, their sandboxes: what the pending budget
 * counts), each up to `budget`, and since when its new events wait for that backlog, if they do (a burst taking turns is not that).
 */
export async function studioBacklogRow(sql: Db, studioId: string, budget: number) {
  const [row] = await sql<{ pending: number; tenantPending: number; deferredSince: Date | null }[]>`
    select (select count(*) from (select 1 from webhook_deliveries
        where studio_id = ${studioId} and status = 'pending' limit ${budget}) x)::int as pending,
      (select ${tenantPendingCount(sql, sql`t.tenant_id`, budget)}
        from (select coalesce(live_studio_id, id) as tenant_id from studios where id = ${studioId}) t) as tenant_pending,
      (select deferred_at from webhook_fanout_deferred where studio_id = ${studioId} and reason = 'budget') as deferred_since`;
  return { ...row!, tenantPending: row!.tenantPending ?? row!.pending };
}

export const notifyDispatchers = (sql: Db) => sql`select pg_notify(${EVENTS_CHANNEL}, '')`;

/** The endpoint's tokens now: those of its row, refilled since (a row never used has a full bucket). */
const tokensNow = (db: Db, bucket: { burst: number; perSecond: number }) =>
  db`least(${bucket.burst}::float8, coalesce(manual_tokens + ${bucket.perSecond}::float8
    * greatest(0, extract(epoch from statement_timestamp() - manual_tokens_at)::float8), ${bucket.burst}::float8))`;

/**
 * Takes one token of the endpoint's manual sends, in one statement whose row lock makes concurrent takes count in
 * turn: 'taken'; else whether it is enabled and how long until the next token.
 */
export async function takeToken(
  tx: Tx,
  studioId: string,
  endpointId: string,
  bucket: { burst: number; perSecond: number },
): Promise<'taken' | { enabled: boolean; waitSeconds: number } | undefined> {
  const where = (db: Db) => db`studio_id = ${studioId} and id = ${endpointId}`;
  const [taken] = await tx`
    update webhook_endpoints set manual_tokens = ${tokensNow(tx, bucket)} - 1,
      manual_tokens_at = greatest(manual_tokens_at, statement_timestamp())
    where ${where(tx)} and enabled and ${tokensNow(tx, bucket)} >= 1
    returning 1`;
  if (taken) return 'taken';
  const [state] = await tx<{ enabled: boolean; waitSeconds: number }[]>`
    select enabled, (1 - ${tokensNow(tx, bucket)}) / ${bucket.perSecond}::float8 as wait_seconds
    from webhook_endpoints where ${where(tx)}`;
  return state;
}

export async function insertDelivery(
  tx: Tx,
  row: Pick<DeliveryRow, 'studioId' | 'id' | 'endpointId' | 'eventId' | 'eventType' | 'payload' | 'nextAttemptAt'>,
): Promise<DeliveryRow> {
  const [made] = await tx<DeliveryRow[]>`insert into webhook_deliveries ${tx(row as never)} returning *`;
  return made!;
}

/** A page of the endpoint's deliveries, newest first, one more than `limit` (to tell whether another page follows). */
export async function deliveriesPage(sql: Sql, studioId: string, endpointId: string, limit: number, before?: string) {
  const after = before
    ? sql`and (created_at, id) < (select created_at, id from webhook_deliveries where studio_id = ${studioId} and id = ${before})`
    : sql``;
  return sql<DeliveryRow[]>`
    select * from webhook_deliveries where studio_id = ${studioId} and endpoint_id = ${endpointId} ${after}
    order by created_at desc, id desc limit ${limit + 1}`;
}

export async function attemptsOf(sql: Sql, studioId: string, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (!deliveryIds.length) return [];
  return sql<AttemptRow[]>`
    select delivery_id, at, status_code, duration_ms, response, error from webhook_attempts
    where studio_id = ${studioId} and delivery_id in ${sql(deliveryIds)} order by seq`;
}

/** A delivery with whether its endpoint is enabled and its event still kept (a test event keeps its own body). */
export async function deliveryForReplay(sql: Sql, studioId: string, deliveryId: string) {
  const [row] = await sql<(DeliveryRow & { endpointEnabled: boolean; eventKept: boolean })[]>`
    select d.*, e.enabled as endpoint_enabled,
      d.payload is not null or exists (select 1 from events ev where ev.studio_id = d.studio_id and ev.id = d.event_id) as event_kept
    from webhook_deliveries d join webhook_endpoints e on e.studio_id = d.studio_id and e.id = d.endpoint_id
    where d.studio_id = ${studioId} and d.id = ${deliveryId}`;
  return row;
}

/** Due again from the first step of the schedule, unless an attempt is in flight (undefined then). */
export async function requeueDelivery(tx: Tx, studioId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
  const [queued] = await tx<DeliveryRow[]>`
    update webhook_deliveries set status = 'pending', round_attempts = 0, next_attempt_at = now(), updated_at = now()
    where studio_id = ${studioId} and id = ${deliveryId} and lease is null
    returning *`;
  return queued;
}
