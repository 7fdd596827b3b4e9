/**
 * A studio's webhook endpoints (docs/design/webhooks.md): the one module the operator CLI, the dashboard and
 * the tests call. Each function takes the endpoint's id and, from the dashboard, the signed-in
 * studio (`studioId`), so another studio's endpoint is `not_found` there. The signing secret is
 * returned by create and roll only, and stored encrypted (`shared/src/io/webhooks/secrets.ts`).
 */
import { AppError, type Config, EVENT_TYPES, iso, isoOrNull, newId } from '@studio/shared';
import type { Db, Sql } from '@studio/shared/io';
import {
  checkTarget,
  createSecretBox,
  deliverySetting,
  disableEndpointIn,
  type EndpointRow,
  newSigningSecret,
  parseWebhookUrl,
  type Resolver,
  type SecretBox,
  systemResolver,
} from '@studio/shared/webhooks';
import * as q from './queries';

export const MAX_ENDPOINTS_PER_STUDIO = 16;
/** How long a rolled secret keeps signing beside the new one, unless told otherwise. */
export const ROLL_GRACE_MS = 24 * 3_600_000;

export interface WebhookContext {
  sql: Sql;
  box: SecretBox;
  /** This process's WEBHOOK_ALLOW_PRIVATE_URLS: what counts only until a dispatcher has recorded its own (`allowsPrivateUrls`). */
  allowPrivateUrls: boolean;
  resolve: Resolver;
}

/**
 * Whether a private or http:// URL may be an endpoint: as the stack's dispatchers deliver (the setting they recorded
 * at their start), so that no endpoint is accepted that the running stack would never deliver to; this process's own
 * setting only while none has recorded one.
 */
export async function allowsPrivateUrls(ctx: Pick<WebhookContext, 'sql' | 'allowPrivateUrls'>): Promise<boolean> {
  return (await deliverySetting(ctx.sql)) ?? ctx.allowPrivateUrls;
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

function found(row: EndpointRow | undefined, endpointId: string): EndpointRow {
  if (!row) throw new AppError('not_found', { detail: `no webhook endpoint ${endpointId}` });
  return row;
}

export async function getEndpoint(sql: Db, endpointId: string, studioId?: string): Promise<EndpointRow> {
  return found(await q.endpointById(sql, endpointId, studioId), endpointId);
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
  const allowPrivate = await allowsPrivateUrls(ctx);
  const parsed = parseWebhookUrl(input.url.trim(), allowPrivate);
  if ('error' in parsed) throw new AppError('validation_failed', { detail: parsed.error });
  const eventTypes = checkedEventTypes(input.events);
  const target = await checkTarget(parsed.url, allowPrivate, ctx.resolve);
  if ('error' in target) throw new AppError('validation_failed', { detail: target.error });
  const id = input.id ?? newId('webhookEndpoint');
  const secret = newSigningSecret();
  const sealed = await ctx.box.seal(secret, id);
  const row = await ctx.sql.begin(async (tx) => {
    if (!(await q.lockStudio(tx, input.studioId)))
      throw new AppError('not_found', { detail: `no studio ${input.studioId}` });
    if ((await q.endpointCount(tx, input.studioId)) >= MAX_ENDPOINTS_PER_STUDIO)
      throw new AppError('conflict', {
        detail: `a studio has at most ${MAX_ENDPOINTS_PER_STUDIO} webhook endpoints; delete one first`,
      });
    const created = await q.insertEndpoint(tx, {
      studioId: input.studioId,
      id,
      url: parsed.url.href,
      eventTypes,
      secretCiphertext: Buffer.from(sealed.ciphertext),
      secretKeyId: sealed.keyId,
    });
    if (!created) throw new AppError('conflict', { detail: `an endpoint ${id} exists already` });
    return created;
  });
  return { endpoint: endpointJson(row), secret };
}

export async function listEndpoints(sql: Db, studioId: string): Promise<EndpointJson[]> {
  return (await q.endpointsOf(sql, studioId)).map(endpointJson);
}

export const DISABLED_BY_HAND = 'Disabled by hand.';

/**
 * Enabling delivers the events recorded from now on (those recorded while it was off have no delivery: a
 * receiver reads them from the feed, `GET /v1/events?after=`); disabling stops deliveries at once, failing its
 * pending deliveries (they can be replayed after it is enabled again).
 */
export async function setEndpointEnabled(
  sql: Sql,
  endpointId: string,
  enabled: boolean,
  studioId?: string,
): Promise<EndpointJson> {
  const current = await getEndpoint(sql, endpointId, studioId);
  if (enabled) return endpointJson(found(await q.markEnabled(sql, current), endpointId));
  const row = await sql.begin((tx) =>
    current.enabled ? disableEndpointIn(tx, current.studioId, current.id, DISABLED_BY_HAND) : Promise.resolve(current),
  );
  return endpointJson(found(row, endpointId));
}

const DELETING = 'Being deleted.';
/** Deliveries deleted a statement at a time while their endpoint is deleted (each takes its attempts with it). */
const DELETE_BATCH = 1000;

/**
 * Deletes the endpoint with its deliveries and their attempts; returns it as it was. Not one cascading delete: it
 * would lock the deliveries in another order than the dispatcher's writes, and one of the two fail (40P01). So the
 * endpoint is disabled first (nothing new is queued for it), its deliveries go in batches that never wait, then it.
 */
export async function deleteEndpoint(sql: Sql, endpointId: string, studioId?: string): Promise<EndpointJson> {
  const current = await getEndpoint(sql, endpointId, studioId);
  await q.markDeleting(sql, current, DELETING);
  for (;;) {
    while ((await q.deleteDeliveriesBatch(sql, current, DELETE_BATCH)) >= DELETE_BATCH);
    const gone = await q.deleteEndpointIfEmpty(sql, current);
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
  const row = await q.replaceSecret(ctx.sql, current, sealed, graceMs > 0 ? new Date(Date.now() + graceMs) : null);
  if (!row)
    throw new AppError('conflict', {
      detail: `the secret of ${endpointId} was rolled meanwhile; roll it again if you need to`,
    });
  return { endpoint: endpointJson(row), secret };
}
