/**
 * What an event type means beyond its name (docs/design/events.md): the resource
 * noun it is about and the read scope a key needs to see it. The list of types is the one
 * webhooks subscribe to (`webhooks/event-types.ts`); the operations table names which write
 * emits which (`emits`).
 */

import { EVENT_TYPES, type EventType } from './event-types';
import type { Scope } from './operations';

export { EVENT_TYPES, type EventType };

/** The noun of a type (`occurrence.rescheduled` -> `occurrence`), stored as the event's `resource`. */
export type EventResource = EventType extends `${infer R}.${string}` ? R : never;

/** Which read scope shows the events of each resource (`member` and `membership` are both members:read). */
export const EVENT_RESOURCE_SCOPES = {
  class: 'classes:read',
  occurrence: 'schedule:read',
  member: 'members:read',
  membership: 'members:read',
  content: 'content:read',
  plan: 'plans:read',
  instructor: 'instructors:read',
  location: 'locations:read',
  room: 'locations:read',
  coupon: 'coupons:read',
  program: 'programs:read',
} as const satisfies Record<EventResource, Scope>;

export const resourceOf = (type: EventType): EventResource => type.slice(0, type.indexOf('.')) as EventResource;
export const isEventType = (s: string): s is EventType => (EVENT_TYPES as readonly string[]).includes(s);

/** The resources whose events a key holding `scopes` may read. */
export const readableResources = (scopes: readonly string[]): EventResource[] =>
  (Object.keys(EVENT_RESOURCE_SCOPES) as EventResource[]).filter((r) => scopes.includes(EVENT_RESOURCE_SCOPES[r]));
