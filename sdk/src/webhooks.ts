/**
 * Verifying a delivery (docs/design/webhooks.md) with the Standard Webhooks library the dispatcher signs with, and
 * typing it: the answer is a union discriminated by `type`, so `if (event.type === 'class.created')` narrows
 * `event.data.object` to a class.
 */
import { Webhook } from 'standardwebhooks';
import type { components } from './generated/management.js';

type Schemas = components['schemas'];
/** An event of the feed (`GET /v1/events`): one member per type. */
export type StudioEvent = Schemas['Event'];
/** What a webhook delivers: an event of the feed, or the dashboard's test event (`webhook.test`). */
export type WebhookEvent = StudioEvent | Schemas['WebhookTestEvent'];
/** An event type's name. */
export type EventType = StudioEvent['type'];
/** The event of one type: `EventOf<'plan.updated'>['data']['previousAttributes']`. */
export type EventOf<T extends WebhookEvent['type']> = Extract<WebhookEvent, { type: T }>;

/** A delivery whose signature, or timestamp (over 5 minutes away), does not verify. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: HeaderSource): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((v, k) => {
      out[k.toLowerCase()] = v;
    });
    return out;
  }
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/**
 * The delivered event, once its signature is checked against the endpoint's `whsec_…` secret (either one, for 24
 * hours after a roll). `body` is the raw body, exactly as received: parse it after, never before.
 */
export function verifyWebhook(body: string | Uint8Array, headers: HeaderSource, secret: string): WebhookEvent {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  try {
    return new Webhook(secret).verify(text, headerRecord(headers)) as WebhookEvent;
  } catch (err) {
    throw new WebhookVerificationError(err instanceof Error ? err.message : String(err));
  }
}
