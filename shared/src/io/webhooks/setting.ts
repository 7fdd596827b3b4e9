/**
 * One setting for where webhooks may go (docs/design/webhooks.md, "Where a webhook may go"): the dispatchers record
 * the WEBHOOK_ALLOW_PRIVATE_URLS they run with, and whatever checks a URL (the dashboard, the CLI) reads that, so that
 * none accepts an endpoint the running stack would refuse to deliver to, or refuses one it would deliver to.
 */
import type { Db } from '../db';

export const PRIVATE_URLS_SETTING = 'WEBHOOK_ALLOW_PRIVATE_URLS';

/** Records what this process delivers under (a management-service's dispatcher, at its start). */
export async function recordDeliverySetting(sql: Db, allowPrivateUrls: boolean): Promise<void> {
  await sql`
    insert into webhook_delivery_setting (allow_private_urls) values (${allowPrivateUrls})
    on conflict (singleton) do update set allow_private_urls = excluded.allow_private_urls, recorded_at = now()`;
}

/** Whether the stack's dispatchers deliver to private and http:// URLs; null when none has recorded it yet. */
export async function deliverySetting(sql: Db): Promise<boolean | null> {
  const [row] = await sql<{ allowPrivateUrls: boolean }[]>`select allow_private_urls from webhook_delivery_setting`;
  return row ? row.allowPrivateUrls : null;
}

/** What a refused URL adds: where the setting is, and how it stands on the stack that delivers. */
export const privateUrlsHint = (allowed: boolean) =>
  allowed
    ? ''
    : ` (http:// and private addresses are allowed only when the stack that delivers webhooks runs with ${PRIVATE_URLS_SETTING}=true, for local development)`;
