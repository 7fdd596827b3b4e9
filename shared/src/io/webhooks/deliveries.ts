/** A webhook delivery's and an attempt's rows, as the dispatcher and `control/src/webhooks/` read them (docs/design/webhooks.md). */
import type postgres from 'postgres';
import type { Db } from '../db';

export interface DeliveryRow {
  studioId: string;
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  payload: unknown;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  roundAttempts: number;
  nextAttemptAt: Date | null;
  lease: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttemptRow {
  deliveryId: string;
  at: Date;
  statusCode: number | null;
  durationMs: number;
  response: string | null;
  error: string | null;
}

/**
 * The pending deliveries of the tenant `tenantId` (an SQL expression naming a live studio: `coalesce(live_studio_id,
 * id)` of any of its studios), counted up to `budget`: the live studio's and its sandboxes' together, as the pending
 * budget counts them (docs/design/webhooks.md, "Fairness"). An index-only read of at most `budget` entries of
 * `webhook_deliveries_pending`, whatever the backlog; the sandboxes by `studios_sandbox_names` (a deleted sandbox's
 * remaining deliveries count for none).
 */
export const tenantPendingCount = (db: Db, tenantId: postgres.PendingQuery<postgres.Row[]>, budget: number) => db`
  (select count(*) from (select 1 from webhook_deliveries d
    where d.studio_id in (select ${tenantId} union all
        select x.id from studios x where x.live_studio_id = ${tenantId} and x.deleted_at is null)
      and d.status = 'pending' limit ${budget}) x)::int`;
