import { type Static, Type as t } from '@sinclair/typebox';
import { Mode } from './classes';
import { Id, IdOut, Instant, Nullable, Page, QueryInstant, Timestamp } from './fields';
import { PageQuery } from './page';

export const Occurrence = t.Object({
  id: IdOut('occ_…'),
  classId: IdOut(),
  title: t.String({ maxLength: 200 }),
  mode: Mode,
  startsAt: Timestamp,
  endsAt: Timestamp,
  durationMinutes: t.Integer(),
  instructorId: IdOut(),
  locationId: Nullable(IdOut()),
  roomId: Nullable(IdOut()),
  capacity: Nullable(t.Integer()),
  status: t.Union([t.Literal('scheduled'), t.Literal('cancelled')]),
  cancelledAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Occurrence = Static<typeof Occurrence>;
export const OccurrencePage = Page(Occurrence);

export const ScheduleQuery = t.Object(
  {
    ...PageQuery.properties,
    from: t.Optional(QueryInstant('Occurrences starting at or after this instant (moved into 1970..9999)')),
    to: t.Optional(QueryInstant('Occurrences starting before this instant (moved into 1970..9999)')),
    classId: t.Optional(Id()),
    instructorId: t.Optional(Id()),
  },
  { additionalProperties: false },
);
export type ScheduleQuery = Static<typeof ScheduleQuery>;

export const RescheduleBody = t.Object(
  {
    startsAt: t.String({ ...Instant, description: 'New start; in the future, else 422 occurrence_in_past' }),
    durationMinutes: t.Optional(t.Integer({ minimum: 5, maximum: 720 })),
  },
  { additionalProperties: false },
);
export type RescheduleBody = Static<typeof RescheduleBody>;
