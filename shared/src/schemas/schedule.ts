import { Type as t, type Static } from '@sinclair/typebox';
import { Instant, Nullable, Page, Timestamp } from './fields';
import { PageQuery } from './page';
import { Mode } from './classes';

export const Occurrence = t.Object({
  id: t.String({ description: 'occ_…' }),
  classId: t.String(),
  title: t.String(),
  mode: Mode,
  startsAt: Timestamp,
  endsAt: Timestamp,
  durationMinutes: t.Integer(),
  instructorId: t.String(),
  locationId: Nullable(t.String()),
  roomId: Nullable(t.String()),
  capacity: Nullable(t.Integer()),
  status: t.Union([t.Literal('scheduled'), t.Literal('cancelled')]),
  cancelledAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Occurrence = Static<typeof Occurrence>;
export const OccurrencePage = Page(Occurrence);

export const ScheduleQuery = t.Object({
  ...PageQuery.properties,
  from: t.Optional(t.String({ ...Instant, description: 'Occurrences starting at or after this instant' })),
  to: t.Optional(t.String({ ...Instant, description: 'Occurrences starting before this instant' })),
  classId: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
  instructorId: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
}, { additionalProperties: false });
export type ScheduleQuery = Static<typeof ScheduleQuery>;

export const RescheduleBody = t.Object({
  startsAt: t.String({ ...Instant, description: 'New start; in the future, else 422 occurrence_in_past' }),
  durationMinutes: t.Optional(t.Integer({ minimum: 5, maximum: 720 })),
}, { additionalProperties: false });
export type RescheduleBody = Static<typeof RescheduleBody>;
