/**
 * A webhook endpoint's row as the dispatcher (management-service) reads and writes it, and what it does with one:
 * disable it, open its signing secrets. Administering endpoints (create, roll, enable, delete, test, replay) is
 * `control/src/webhooks/` (docs/design/webhooks.md).
 */
import type { Tx } from '../db';
import type { SecretBox } from './secrets';

/** The channel the dispatchers LISTEN on: an event's insert notifies it at commit, and so do a test event and a replay. */
export const EVENTS_CHANNEL = 'studio_events';

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
