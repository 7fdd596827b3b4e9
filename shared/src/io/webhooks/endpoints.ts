/**
 * A studio's webhook endpoints (docs/design/webhooks.md): the one module the operator CLI, the dashboard and
 * the tests call. Each function takes the endpoint's id and, from the dashboard, the signed-in
 * studio (`studioId`), so another studio's endpoint is `not_found` there. The signing secret is
 * returned by create and roll only, and stored encrypted (`secrets.ts`).
 */
import type { Config } from '../../config';
import { EVENT_TYPES } from '../../event-types';
import { newId } from '../../ids';
import { AppError } from '../../problem';
import { iso, isoOrNull } from '../../time';
import type { Db, Sql, Tx } from '../db';
import { createSecretBox, newSigningSecret, type SecretBox } from './secrets';
import { checkTarget, parseWebhookUrl, type Resolver, systemResolver } from './target';

export const MAX_ENDPOINTS_PER_STUDIO = 16;
/** How long a rolled secret keeps signing beside the new one, unless told otherwise. */
export const ROLL_GRACE_MS = 24 * 3_600_000;
/** The channel the dispatchers LISTEN on: an event's insert notifies it at commit, and so do a test event and a replay. */
export const EVENTS_CHANNEL = 'studio_events';

export interface WebhookContext {
  sql: Sql;
  box: SecretBox;
  allowPrivateUrls: boolean;
  resolve: Resolver;
}

export function webhookContext(
  sql: Sql,
  config: Pick<Config, 'WEBHOOK_SECRET_KEY' | 'WEBHOOK_ALLOW_PRIVATE_URLS'>,
  resolve: Resolver = systemResolver,
): WebhookContext {
  return {
    sql,
    box: createSecretBox(config.WEBHOOK_SECRET_KEY),
    allowPrivateUrls: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    resolve,
  };
}

export interface EndpointRow {
  studioId: string;
  id: string;
  url: string;
  eventTypes: string[] | null;
  enabled: boolean;
  disabledReason: string | null;
  enabledAt: Date;
  secretCiphertext: Buffer;
  secretKeyId: string;
  previousSecretCiphertext: Buffer | null;
  previousSecretKeyId: string | null;
  previousSecretUntil: Date | null;
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An endpoint as the CLI prints it and the dashboard shows it; never its secret. */
export const endpointJson = (r: EndpointRow) => ({
  id: r.id,
  url: r.url,
  events: r.eventTypes,
  enabled: r.enabled,
  disabledReason: r.disabledReason,
  createdAt: iso(r.createdAt),
  /** Since when every attempt has failed (null while the last one succeeded). */
  failingSince: isoOrNull(r.failingSince),
  /** Until when the secret before the last roll still signs beside the current one. */
  previousSecretExpiresAt:
    r.previousSecretUntil && r.previousSecretUntil > new Date() ? iso(r.previousSecretUntil) : null,
});
export type EndpointJson = ReturnType<typeof endpointJson>;

/** The event types to subscribe to: null or empty for all; unknown ones are refused, naming the known. */
function checkedEventTypes(events: readonly string[] | null | undefined): string[] | null {
  const wanted = [...new Set((events ?? []).map((e) => e.trim()).filter(Boolean))];
  if (!wanted.length) return null;
  const unknown = wanted.filter((e) => !(EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length)
    throw new AppError('validation_failed', {
      detail: `unknown event type ${unknown.slice(0, 3).join(', ')}; the types are ${EVENT_TYPES.join(', ')}`,
    });
  return wanted.sort();
}

const byId = (sql: Db, endpointId: string, studioId?: string) =>
  studioId ? sql`studio_id = ${studioId} and id = ${endpointId}` : sql`id = ${endpointId}`;

function found(row: EndpointRow | undefined, endpointId: string): EndpointRow {
  if (!row) throw new AppError('not_found', { detail: `no webhook endpoint ${endpointId}` });
  return row;
}

export async function getEndpoint(sql: Db, endpointId: string, studioId?: string): Promise<EndpointRow> {
  const [row] = await sql<EndpointRow[]>`select * from webhook_endpoints where ${byId(sql, endpointId, studioId)}`;
  return found(row, endpointId);
}

/**
 * A new endpoint and its secret, shown this once. The URL is checked here (https, public addresses
 * only) and again before every delivery. At most 16 a studio: the studio's row is locked while
 * counting, so two concurrent creates cannot both take the sixteenth place.
 */
export async function createEndpoint(
  ctx: WebhookContext,
  /** `id`: when the caller chose it (a dashboard form's); one that exists already is a 409 `conflict`. */
  input: { studioId: string; url: string; events?: readonly string[] | null; id?: string },
) {
  const parsed = parseWebhookUrl(input.url.trim(), ctx.allowPrivateUrls);
  if ('error' in parsed) throw new AppError('validation_failed', { detail: parsed.error });
  const eventTypes = checkedEventTypes(input.events);
  const target = await checkTarget(parsed.url, ctx.allowPrivateUrls, ctx.resolve);
  if ('error' in target) throw new AppError('validation_failed', { detail: target.error });
  const id = input.id ?? newId('webhookEndpoint');
  const secret = newSigningSecret();
  const sealed = await ctx.box.seal(secret, id);
  const row = await ctx.sql.begin(async (tx) => {
    const [studio] =
      await tx`select id from studios where id = ${input.studioId} and deleted_at is null for no key update`;
    if (!studio) throw new AppError('not_found', { detail: `no studio ${input.studioId}` });
    const [{ count }] =
      (await tx`select count(*)::int as count from webhook_endpoints where studio_id = ${input.studioId}`) as unknown as [
        { count: number },
      ];
    if (count >= MAX_ENDPOINTS_PER_STUDIO)
      throw new AppError('conflict', {
        detail: `a studio has at most ${MAX_ENDPOINTS_PER_STUDIO} webhook endpoints; delete one first`,
      });
    const [created] = await tx<EndpointRow[]>`
      insert into webhook_endpoints ${tx({
        studioId: input.studioId,
        id,
        url: parsed.url.href,
        eventTypes,
        secretCiphertext: Buffer.from(sealed.ciphertext),
        secretKeyId: sealed.keyId,
      })}
      on conflict (studio_id, id) do nothing
      returning *`;
    if (!created) throw new AppError('conflict', { detail: `an endpoint ${id} exists already` });
    return created;
  });
  return { endpoint: endpointJson(row), secret };
}

export async function listEndpoints(sql: Db, studioId: string): Promise<EndpointJson[]> {
  const rows = await sql<
    EndpointRow[]
  >`select * from webhook_endpoints where studio_id = ${studioId} order by created_at, id`;
  return rows.map(endpointJson);
}

/**
 * Turns an endpoint off (with the reason shown beside it) in `tx`: its pending deliveries fail at
 * once (they can be replayed after it is enabled again). Used by the CLI and dashboard, and by the
 * dispatcher on a 410 or after 3 days of failures.
 */
export async function disableEndpointIn(
  tx: Tx,
  studioId: string,
  endpointId: string,
  reason: string,
): Promise<EndpointRow | undefined> {
  const [row] = await tx<EndpointRow[]>`
    update webhook_endpoints set enabled = false, disabled_reason = ${reason}, updated_at = now()
    where studio_id = ${studioId} and id = ${endpointId} returning *`;
  if (row) {
    // an attempt in flight (leased) records its own outcome, and fails then if this endpoint is off
    await tx`
      update webhook_deliveries set status = 'failed', next_attempt_at = null, updated_at = now()
      where studio_id = ${studioId} and endpoint_id = ${endpointId} and status = 'pending' and lease is null`;
  }
  return row;
}

export const DISABLED_BY_HAND = 'Disabled by hand.';

/**
 * Enabling delivers the events recorded from now on (those recorded while it was off have no delivery: a
 * receiver reads them from the feed, `GET /v1/events?after=`); disabling stops deliveries at once.
 */
export async function setEndpointEnabled(
  sql: Sql,
  endpointId: string,
  enabled: boolean,
  studioId?: string,
): Promise<EndpointJson> {
  const current = await getEndpoint(sql, endpointId, studioId);
  if (enabled) {
    const [row] = await sql<EndpointRow[]>`
      update webhook_endpoints set enabled = true, disabled_reason = null, enabled_at = case when enabled then enabled_at else now() end,
        enabled_snapshot = case when enabled then enabled_snapshot else pg_current_snapshot() end,
        failing_since = null, updated_at = now()
      where studio_id = ${current.studioId} and id = ${current.id} returning *`;
    return endpointJson(found(row, endpointId));
  }
  const row = await sql.begin((tx) =>
    current.enabled ? disableEndpointIn(tx, current.studioId, current.id, DISABLED_BY_HAND) : Promise.resolve(current),
  );
  return endpointJson(found(row, endpointId));
}

const DELETING = 'Being deleted.';
/** Deliveries deleted a statement at a time while their endpoint is deleted (each takes its attempts with it). */
const DELETE_BATCH = 1000;

/** An endpoint's deliveries, in batches that skip the rows a dispatcher holds: it never waits for one, so never in a cycle. */
async function deleteDeliveriesOf(sql: Sql, e: Pick<EndpointRow, 'studioId' | 'id'>) {
  for (;;) {
    const gone = await sql`
      delete from webhook_deliveries where (studio_id, id) in (
        select studio_id, id from webhook_deliveries where studio_id = ${e.studioId} and endpoint_id = ${e.id}
        limit ${DELETE_BATCH} for update skip locked)`;
    if (gone.count < DELETE_BATCH) return;
  }
}

/**
 * Deletes the endpoint with its deliveries and their attempts; returns it as it was. Not one cascading delete: it
 * would lock the deliveries in another order than the dispatcher's writes, and one of the two fail (40P01). So the
 * endpoint is disabled first (nothing new is queued for it), its deliveries go in batches that never wait, then it.
 */
export async function deleteEndpoint(sql: Sql, endpointId: string, studioId?: string): Promise<EndpointJson> {
  const current = await getEndpoint(sql, endpointId, studioId);
  const key = (db: Db) => db`studio_id = ${current.studioId} and id = ${current.id}`;
  await sql`update webhook_endpoints set enabled = false, disabled_reason = ${DELETING}, updated_at = now() where ${key(sql)} and enabled`;
  for (;;) {
    await deleteDeliveriesOf(sql, current);
    // with the endpoint's row locked no delivery can be added (the foreign key's check waits for the lock): if none is
    // left, the cascade has nothing to lock
    const gone = await sql.begin(async (tx) => {
      if (!(await tx`select 1 from webhook_endpoints where ${key(tx)} for update`).length) return 'elsewhere';
      const [left] =
        await tx`select 1 from webhook_deliveries where studio_id = ${current.studioId} and endpoint_id = ${current.id} limit 1`;
      if (left) return null;
      await tx`delete from webhook_endpoints where ${key(tx)}`;
      return 'here';
    });
    if (gone === 'elsewhere') throw new AppError('not_found', { detail: `no webhook endpoint ${endpointId}` });
    if (gone) return endpointJson(current);
    await Bun.sleep(10); // deliveries a dispatcher was writing: its statements are short
  }
}

/**
 * Which secret an endpoint signs with now, as a short fingerprint of its sealed form (it tells nothing of the
 * secret): a roll form carries the one it was drawn for, so sending it again cannot roll a second time.
 */
export const secretVersionOf = (r: Pick<EndpointRow, 'secretCiphertext'>): string =>
  new Bun.CryptoHasher('sha256').update(r.secretCiphertext).digest('base64url').slice(0, 22);

/**
 * A new secret, shown this once; the one it replaces keeps signing beside it for `graceMs` (default
 * 24 hours, 0 for not at all), so a receiver can switch without refusing a delivery. `from`: the secret the
 * caller means to roll (`secretVersionOf`); when another has replaced it since, nothing is rolled (409 `conflict`).
 */
export async function rollEndpointSecret(
  ctx: WebhookContext,
  endpointId: string,
  options: { studioId?: string; graceMs?: number; from?: string } = {},
) {
  const current = await getEndpoint(ctx.sql, endpointId, options.studioId);
  if (options.from !== undefined && options.from !== secretVersionOf(current))
    throw new AppError('conflict', { detail: `the secret of ${endpointId} was rolled since this roll was asked for` });
  const secret = newSigningSecret();
  const sealed = await ctx.box.seal(secret, current.id);
  const graceMs = options.graceMs ?? ROLL_GRACE_MS;
  const until = graceMs > 0 ? new Date(Date.now() + graceMs) : null;
  // compared with the secret read above, so two rolls at once cannot drop a secret a receiver holds
  const [row] = await ctx.sql<EndpointRow[]>`
    update webhook_endpoints set
      previous_secret_ciphertext = ${until ? current.secretCiphertext : null}, previous_secret_key_id = ${until ? current.secretKeyId : null},
      previous_secret_until = ${until}, secret_ciphertext = ${Buffer.from(sealed.ciphertext)}, secret_key_id = ${sealed.keyId}, updated_at = now()
    where studio_id = ${current.studioId} and id = ${current.id} and secret_ciphertext = ${current.secretCiphertext}
    returning *`;
  if (!row)
    throw new AppError('conflict', {
      detail: `the secret of ${endpointId} was rolled meanwhile; roll it again if you need to`,
    });
  return { endpoint: endpointJson(row), secret };
}

/** The secrets that sign a delivery now: the current one, and the previous one until its roll's grace ends. */
export async function signingSecrets(
  box: SecretBox,
  e: Pick<
    EndpointRow,
    | 'id'
    | 'secretCiphertext'
    | 'secretKeyId'
    | 'previousSecretCiphertext'
    | 'previousSecretKeyId'
    | 'previousSecretUntil'
  >,
  now = new Date(),
): Promise<string[]> {
  const current = await box.open({ ciphertext: e.secretCiphertext, keyId: e.secretKeyId }, e.id);
  if (!e.previousSecretCiphertext || !e.previousSecretKeyId || !e.previousSecretUntil || e.previousSecretUntil <= now)
    return [current];
  return [current, await box.open({ ciphertext: e.previousSecretCiphertext, keyId: e.previousSecretKeyId }, e.id)];
}
