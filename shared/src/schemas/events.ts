import { type Static, Type as t } from '@sinclair/typebox';
import { EVENT_TYPES } from '../event-types';
import { Class } from './classes';
import { Video } from './content';
import { Coupon } from './coupons';
import { Id, IdOut, Nullable, Page, Timestamp } from './fields';
import { Instructor } from './instructors';
import { Location, Room } from './locations';
import { Member } from './members';
import { PageQuery } from './page';
import { Plan } from './plans';
import { Program } from './programs';
import { Occurrence } from './schedule';

export const EventTypeName = t.Union(
  EVENT_TYPES.map((type) => t.Literal(type)),
  {
    description:
      "The resource's noun, then what happened to it. New types may be added within v1: ignore the ones you do not know.",
  },
);

const OBJECT =
  'The resource after the change, exactly as its GET returned it then (a deleted or cancelled one in its final state).';

/** docs/design/events.md: what changed, with the resource as its GET returns it. */
export const Event = t.Object({
  id: IdOut('evt_…: opaque; resume the feed after it with `after`. Ids do not sort in feed order.'),
  type: EventTypeName,
  createdAt: Timestamp,
  data: t.Object({
    // not checked when served: an event keeps the shape its resource had when it was recorded (fields may be
    // added within v1), and a page serves up to 100; documented as the resources it can be
    object: t.Unknown({
      'x-doc': t.Union([Class, Occurrence, Member, Video, Plan, Instructor, Location, Room, Coupon, Program], {
        description: OBJECT,
      }),
    }),
    previousAttributes: t.Optional(
      t.Unknown({
        'x-doc': t.Object(
          {},
          {
            additionalProperties: true,
            maxProperties: 40,
            description:
              'Only on `*.updated` and `*.rescheduled`: the old value of each field of `object` that changed (`updatedAt` aside).',
          },
        ),
      }),
    ),
  }),
  requestId: Nullable(IdOut('The request that made the change (its `X-Request-Id`).')),
});
export type Event = Static<typeof Event>;
export const EventPage = Page(Event);

export const EventsQuery = t.Object(
  {
    ...PageQuery.properties,
    type: t.Optional(
      t.String({
        maxLength: 2000,
        // loose on purpose: a name that is no event type is refused by the service, naming it and listing the types
        pattern: '^([a-z_.]+(,[a-z_.]+)*)?$',
        'x-pattern-hint': 'event types separated by commas, such as class.created,class.cancelled',
        description:
          'Only events of this type, or of these comma-separated types (`class.created,class.cancelled`); empty: all.',
      }),
    ),
    after: t.Optional(
      Id('Only the events after this one (the id of the last event you handled). Ignored when `cursor` is sent.'),
    ),
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;
