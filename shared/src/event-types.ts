/** The event types an endpoint can subscribe to (docs/design/events.md), and the one only a test sends. */
export const EVENT_TYPES = [
  'class.created',
  'class.updated',
  'class.cancelled',
  'occurrence.created',
  'occurrence.updated',
  'occurrence.cancelled',
  'occurrence.rescheduled',
  'member.invited',
  'member.updated',
  'membership.cancelled',
  'content.updated',
  'content.deleted',
  'plan.created',
  'plan.updated',
  'plan.archived',
  'instructor.created',
  'instructor.updated',
  'location.created',
  'location.updated',
  'location.deleted',
  'room.created',
  'room.updated',
  'room.deleted',
  'coupon.created',
  'coupon.archived',
  'program.created',
  'program.updated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What "Send a test event" sends: never recorded in the feed, never subscribed to. */
export const TEST_EVENT_TYPE = 'webhook.test';
