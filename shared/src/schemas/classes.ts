import { type Static, Type as t } from '@sinclair/typebox';
import { Id as IdIn, IdOut, Instant, Nullable, Page, Text, Timestamp } from './fields';

export const CLASS_MODES = ['broadcast', 'two_way', 'community', 'coaching'] as const;
export const Mode = t.Union(
  CLASS_MODES.map((m) => t.Literal(m)),
  { description: 'Must be enabled for the studio, else 422 unsupported_channel' },
);
export const Level = t.Union([
  t.Literal('all_levels'),
  t.Literal('beginner'),
  t.Literal('intermediate'),
  t.Literal('advanced'),
]);
export const Visibility = t.Union([t.Literal('public'), t.Literal('unlisted'), t.Literal('private')]);
export const Recurrence = t.Object(
  {
    intervalDays: t.Integer({ minimum: 1, maximum: 365, description: 'Days between occurrences' }),
    count: t.Integer({ minimum: 1, maximum: 365, description: 'Total occurrences, the first included' }),
  },
  { additionalProperties: false },
);

const Id = (what: string) => IdIn(what);
const title = Text(200, { minLength: 1 });
const discipline = Text(60, { minLength: 1 });

export const CreateClassBody = t.Object(
  {
    title,
    mode: Mode,
    instructorId: Id('A live instructor of the studio, else 422 unknown_instructor'),
    startsAt: t.String({ ...Instant, description: 'First occurrence; in the future, else 422 occurrence_in_past' }),
    durationMinutes: t.Integer({ minimum: 5, maximum: 720 }),
    discipline: t.Optional(discipline),
    level: t.Optional(Level),
    capacity: t.Optional(t.Integer({ minimum: 1, maximum: 10000 })),
    visibility: t.Optional(Visibility),
    planIds: t.Optional(t.Array(Id('A live plan, else 422 unknown_plan'), { maxItems: 100 })),
    locationId: t.Optional(Id('A live location of the studio')),
    roomId: t.Optional(Id('A live room of the studio (of locationId when given)')),
    recurrence: t.Optional(Recurrence),
  },
  { additionalProperties: false },
);
export type CreateClassBody = Static<typeof CreateClassBody>;

export const UpdateClassBody = t.Object(
  {
    title: t.Optional(title),
    discipline: t.Optional(Nullable(discipline)),
    level: t.Optional(Level),
    capacity: t.Optional(Nullable(t.Integer({ minimum: 1, maximum: 10000 }))),
    visibility: t.Optional(Visibility),
    planIds: t.Optional(t.Array(Id('A live plan, else 422 unknown_plan'), { maxItems: 100 })),
    instructorId: t.Optional(Id('Applied to the future occurrences; 409 instructor_double_booked if that overlaps')),
    durationMinutes: t.Optional(
      t.Integer({ minimum: 5, maximum: 720, description: 'Applied to the future occurrences' }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateClassBody = Static<typeof UpdateClassBody>;

export const Class = t.Object({
  id: IdOut('cls_…'),
  title: t.String({ maxLength: 200 }),
  mode: Mode,
  instructorId: IdOut(),
  startsAt: t.String({
    maxLength: 32,
    description:
      'Start of the first occurrence as the class was created (UTC, ms); a reschedule moves the occurrence only',
  }),
  durationMinutes: t.Integer(),
  discipline: Nullable(t.String({ maxLength: 60 })),
  level: Level,
  capacity: Nullable(t.Integer()),
  visibility: Visibility,
  planIds: t.Array(IdOut(), { maxItems: 100 }),
  locationId: Nullable(IdOut()),
  roomId: Nullable(IdOut()),
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
