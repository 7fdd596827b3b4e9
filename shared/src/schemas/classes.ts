import { Type as t, type Static } from '@sinclair/typebox';
import { Instant, Nullable, Page, Timestamp } from './fields';

export const CLASS_MODES = ['broadcast', 'two_way', 'community', 'coaching'] as const;
export const Mode = t.Union(CLASS_MODES.map((m) => t.Literal(m)), { description: 'Must be enabled for the studio, else 422 unsupported_channel' });
export const Level = t.Union([t.Literal('all_levels'), t.Literal('beginner'), t.Literal('intermediate'), t.Literal('advanced')]);
export const Visibility = t.Union([t.Literal('public'), t.Literal('unlisted'), t.Literal('private')]);
export const Recurrence = t.Object({
  intervalDays: t.Integer({ minimum: 1, maximum: 365, description: 'Days between occurrences' }),
  count: t.Integer({ minimum: 1, maximum: 365, description: 'Total occurrences, the first included' }),
}, { additionalProperties: false });

const Id = (what: string) => t.String({ minLength: 1, maxLength: 64, description: what });

export const CreateClassBody = t.Object({
  title: t.String({ minLength: 1, maxLength: 200 }),
  mode: Mode,
  instructorId: Id('A live instructor of the studio, else 422 unknown_instructor'),
  startsAt: t.String({ ...Instant, description: 'First occurrence; in the future, else 422 occurrence_in_past' }),
  durationMinutes: t.Integer({ minimum: 5, maximum: 720 }),
  discipline: t.Optional(t.String({ minLength: 1, maxLength: 60 })),
  level: t.Optional(Level),
  capacity: t.Optional(t.Integer({ minimum: 1, maximum: 10000 })),
  visibility: t.Optional(Visibility),
  planIds: t.Optional(t.Array(Id('A live plan, else 422 unknown_plan'), { maxItems: 100 })),
  locationId: t.Optional(Id('A live location of the studio')),
  roomId: t.Optional(Id('A live room of the studio (of locationId when given)')),
  recurrence: t.Optional(Recurrence),
}, { additionalProperties: false });
export type CreateClassBody = Static<typeof CreateClassBody>;

export const UpdateClassBody = t.Object({
  title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  discipline: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 60 }))),
  level: t.Optional(Level),
  capacity: t.Optional(Nullable(t.Integer({ minimum: 1, maximum: 10000 }))),
  visibility: t.Optional(Visibility),
  planIds: t.Optional(t.Array(Id('A live plan, else 422 unknown_plan'), { maxItems: 100 })),
  instructorId: t.Optional(Id('Applied to the future occurrences; 409 instructor_double_booked if that overlaps')),
  durationMinutes: t.Optional(t.Integer({ minimum: 5, maximum: 720, description: 'Applied to the future occurrences' })),
}, { additionalProperties: false });
export type UpdateClassBody = Static<typeof UpdateClassBody>;

export const Class = t.Object({
  id: t.String({ description: 'cls_…' }),
  title: t.String(),
  mode: Mode,
  instructorId: t.String(),
  startsAt: t.String({ description: 'Start of the first occurrence (UTC, ms)' }),
  durationMinutes: t.Integer(),
  discipline: Nullable(t.String()),
  level: Level,
  capacity: Nullable(t.Integer()),
  visibility: Visibility,
  planIds: t.Array(t.String()),
  locationId: Nullable(t.String()),
  roomId: Nullable(t.String()),
  recurrence: Nullable(Recurrence),
  status: t.Union([t.Literal('scheduled'), t.Literal('cancelled')]),
  occurrenceCount: t.Integer({ description: 'Occurrences that are not cancelled' }),
  nextOccurrenceAt: Nullable(Timestamp),
  cancelledAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Class = Static<typeof Class>;
export const ClassPage = Page(Class);
