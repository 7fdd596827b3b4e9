/** A webhook delivery's and an attempt's rows, as the dispatcher and `control/src/webhooks/` read them (docs/design/webhooks.md). */

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
