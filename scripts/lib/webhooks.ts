/**
 * The operator's webhook commands (docs/design/webhooks.md): `webhook:create`, `:list`, `:enable`, `:disable`,
 * `:delete`, `:roll-secret`, `:test`. The work is the control module's (`control/src/webhooks/`), the one
 * the dashboard calls too; this prints the endpoint with the fields docs/design/webhooks.md names, and the secret only
 * where one was just made.
 */

import {
  createEndpoint,
  deleteEndpoint,
  type EndpointJson,
  listEndpoints,
  rollEndpointSecret,
  sendTestEvent,
  setEndpointEnabled,
  webhookContext,
} from '@studio/control';
import type { Config } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import { requireStudio } from './studios';

const shown = (e: EndpointJson) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  enabled: e.enabled,
  disabledReason: e.disabledReason,
  createdAt: e.createdAt,
});

export async function webhookCreate(
  sql: Sql,
  config: Config,
  studioId: string,
  url: string,
  events: string[] | undefined,
) {
  const { endpoint, secret } = await createEndpoint(webhookContext(sql, config), { studioId, url, events });
  return { endpoint: shown(endpoint), secret };
}

export async function webhookList(sql: Sql, studioId: string) {
  await requireStudio(sql, studioId);
  return { endpoints: (await listEndpoints(sql, studioId)).map(shown) };
}

export async function webhookSetEnabled(sql: Sql, endpointId: string, enabled: boolean) {
  return { endpoint: shown(await setEndpointEnabled(sql, endpointId, enabled)) };
}

export async function webhookDelete(sql: Sql, endpointId: string) {
  return { endpoint: shown(await deleteEndpoint(sql, endpointId)), deleted: true };
}

/** A new secret, printed once; the old one keeps signing beside it for `graceMs` (default 24 h). */
export async function webhookRollSecret(sql: Sql, config: Config, endpointId: string, graceMs: number | undefined) {
  const { endpoint, secret } = await rollEndpointSecret(webhookContext(sql, config), endpointId, { graceMs });
  return { endpoint: shown(endpoint), secret, previousSecretExpiresAt: endpoint.previousSecretExpiresAt };
}

export async function webhookTest(sql: Sql, endpointId: string) {
  return { delivery: await sendTestEvent(sql, endpointId) };
}
