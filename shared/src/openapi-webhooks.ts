/**
 * The Management document's top-level `webhooks` (OpenAPI 3.1, docs/design/events.md–16): one entry per
 * event type, its body the event envelope with `data.object` the resource's own schema (and
 * `previousAttributes` on `*.updated` / `*.rescheduled`), an example each, and the Standard Webhooks
 * signature headers. `openapi.ts` calls it with its own schema converter, so the resources become
 * the same `$ref`s as the operations'.
 */
import { type TSchema, Type as t } from '@sinclair/typebox';
import { EVENT_TYPES, type EventType, TEST_EVENT_TYPE } from './event-types';
import type { EventResource } from './events';
import { Class } from './schemas/classes';
import { Video } from './schemas/content';
import { Coupon } from './schemas/coupons';
import { Event } from './schemas/events';
import { EXAMPLES } from './schemas/examples';
import { Instructor } from './schemas/instructors';
import { Location, Room } from './schemas/locations';
import { Member } from './schemas/members';
import { Plan } from './schemas/plans';
import { Program } from './schemas/programs';
import { Occurrence } from './schemas/schedule';

type Json = Record<string, unknown>;
/** `openapi.ts`'s converter: a named schema becomes a `$ref` (collected as a component), any other is written inline. */
export type SchemaDoc = (schema: TSchema) => unknown;

/** The schema of `data.object`, by the type's noun: what the resource's GET returns. */
export const EVENT_OBJECT_SCHEMAS: Record<EventResource, TSchema> = {
  class: Class,
  occurrence: Occurrence,
  member: Member,
  membership: Member,
  content: Video,
  plan: Plan,
  instructor: Instructor,
  location: Location,
  room: Room,
  coupon: Coupon,
  program: Program,
};

/** The types whose events carry `previousAttributes`. */
export const hasPreviousAttributes = (type: string) => type.endsWith('.updated') || type.endsWith('.rescheduled');

const VERB: Record<string, string> = {
  created: 'was created',
  updated: 'was changed',
  cancelled: 'was cancelled',
  rescheduled: 'was moved to another time',
  invited: 'was invited',
  archived: 'was archived',
  deleted: 'was deleted',
};
const NOTE: Partial<Record<EventType, string>> = {
  'occurrence.created': 'One for each occurrence a class create (or its recurrence) adds, beside `class.created`.',
  'occurrence.updated':
    'One for each future occurrence a class update changes (instructor, duration, capacity, room), beside `class.updated`.',
  'occurrence.cancelled': 'One for each future occurrence a class cancel cancels, beside `class.cancelled`.',
  'room.deleted': 'Also one for each room of a deleted location, beside `location.deleted`.',
  'membership.cancelled': '`data.object` is the member, its status `cancelled`.',
  'content.updated': '`data.object` is the video.',
  'content.deleted': '`data.object` is the video in its final state.',
};

const E = EXAMPLES;
const LATER = '2026-11-25T08:30:12.045Z';
/** Each type's example: the story of `schemas/examples.ts`, one change each. */
const EXAMPLE_CHANGES: Record<EventType, { object: Json; previousAttributes?: Json }> = {
  'class.created': { object: E.Class },
  'class.updated': {
    object: { ...E.Class, title: 'Vinyasa Flow & Meditation', durationMinutes: 75, capacity: 18, updatedAt: LATER },
    previousAttributes: { title: 'Vinyasa Flow', durationMinutes: 60, capacity: 20 },
  },
  'class.cancelled': {
    object: { ...E.Class, status: 'cancelled', nextOccurrenceAt: null, cancelledAt: LATER, updatedAt: LATER },
  },
  'occurrence.created': { object: E.Occurrence },
  'occurrence.updated': {
    object: {
      ...E.Occurrence,
      durationMinutes: 75,
      endsAt: '2027-03-02T19:15:00.000Z',
      capacity: 18,
      updatedAt: LATER,
    },
    previousAttributes: { durationMinutes: 60, endsAt: '2027-03-02T19:00:00.000Z', capacity: 20 },
  },
  'occurrence.cancelled': { object: { ...E.Occurrence, status: 'cancelled', cancelledAt: LATER, updatedAt: LATER } },
  'occurrence.rescheduled': {
    object: {
      ...E.Occurrence,
      startsAt: '2027-03-03T18:00:00.000Z',
      endsAt: '2027-03-03T19:00:00.000Z',
      updatedAt: LATER,
    },
    previousAttributes: { startsAt: '2027-03-02T18:00:00.000Z', endsAt: '2027-03-02T19:00:00.000Z' },
  },
  'member.invited': { object: { ...E.Member, status: 'invited', updatedAt: E.Member.createdAt } },
  'member.updated': {
    object: { ...E.Member, role: 'front_desk', updatedAt: LATER },
    previousAttributes: { role: 'member' },
  },
  'membership.cancelled': { object: { ...E.Member, status: 'cancelled', cancelledAt: LATER, updatedAt: LATER } },
  'content.updated': {
    object: { ...E.Video, visibility: 'public', updatedAt: LATER },
    previousAttributes: { visibility: 'members_only' },
  },
  'content.deleted': { object: { ...E.Video, deletedAt: LATER, updatedAt: LATER } },
  'plan.created': { object: E.Plan },
  'plan.updated': {
    object: { ...E.Plan, config: { ...E.Plan.config, priceCents: 13900 }, updatedAt: LATER },
    previousAttributes: { config: E.Plan.config },
  },
  'plan.archived': { object: { ...E.Plan, status: 'archived', archivedAt: LATER, updatedAt: LATER } },
  'instructor.created': { object: E.Instructor },
  'instructor.updated': {
    object: { ...E.Instructor, disciplines: [...E.Instructor.disciplines, 'pranayama'], updatedAt: LATER },
    previousAttributes: { disciplines: E.Instructor.disciplines },
  },
  'location.created': { object: E.Location },
  'location.updated': {
    object: { ...E.Location, name: 'Lotus Yoga Kreuzberg (Oranienstraße)', updatedAt: LATER },
    previousAttributes: { name: E.Location.name },
  },
  'location.deleted': { object: { ...E.Location, status: 'deleted', deletedAt: LATER, updatedAt: LATER } },
  'room.created': { object: E.Room },
  'room.updated': { object: { ...E.Room, capacity: 22, updatedAt: LATER }, previousAttributes: { capacity: 24 } },
  'room.deleted': { object: { ...E.Room, status: 'deleted', deletedAt: LATER, updatedAt: LATER } },
  'coupon.created': { object: E.Coupon },
  'coupon.archived': { object: { ...E.Coupon, status: 'archived', archivedAt: LATER, updatedAt: LATER } },
  'program.created': { object: E.Program },
  'program.updated': {
    object: { ...E.Program, priceCents: 7900, updatedAt: LATER },
    previousAttributes: { priceCents: 8900 },
  },
};

/** A type's example body: exactly what a receiver gets (and `GET /v1/events/{eventId}` serves). */
export function webhookExample(type: EventType): Json {
  const { object, previousAttributes } = EXAMPLE_CHANGES[type];
  return {
    id: E.Event.id,
    type,
    createdAt: object.updatedAt,
    data: previousAttributes ? { object, previousAttributes } : { object },
    requestId: E.Event.requestId,
  };
}

const TEST_EXAMPLE = {
  id: E.Event.id,
  type: TEST_EVENT_TYPE,
  createdAt: LATER,
  data: {
    object: {
      endpointId: 'whe_0353BbgE5743j7VoHoV2V0',
      url: 'https://hooks.lotusyoga.example/studio',
      message: 'A test event: your endpoint receives and verifies webhooks.',
    },
  },
  requestId: null,
};

/** The signature scheme, in the document's description and beside every webhook. */
export const WEBHOOKS_DESCRIPTION =
  "**Webhooks.** Each change is also sent, as its event, to the studio's webhook endpoints (added in the developer settings dashboard, " +
  'or with `bun run admin webhook:create`): a `POST` of the event JSON, signed per [Standard Webhooks 1.0](https://www.standardwebhooks.com/). ' +
  'Headers: `webhook-id` (the event id: the same on every retry; deduplicate on it), `webhook-timestamp` (Unix seconds) and `webhook-signature` ' +
  "(`v1,` + the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes the base64 after the secret's `whsec_` stands for; " +
  'after a secret is rolled, for 24 hours, two signatures separated by a space: accept the delivery when either matches). ' +
  'Verify with a Standard Webhooks library, e.g. `new Webhook(secret).verify(body, headers)` of the `standardwebhooks` npm package, on the raw body, ' +
  'and refuse a timestamp more than 5 minutes away. Answer 2xx within 10 s; anything else, a timeout or a refused connection is retried ' +
  '(by default after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, with jitter; the operator may set another schedule), and `410 Gone` disables the endpoint. Delivery is at least once, in no guaranteed order: ' +
  'the events feed (`GET /v1/events`) has the order. The `webhooks` section of this document has one entry per event type, with its body.';

/** The three headers, written once under components.parameters. */
export const WEBHOOK_PARAMETERS: Record<string, Json> = {
  WebhookId: {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id (`evt_…`): the same on every attempt of this event to this endpoint. Deduplicate on it.',
    schema: { type: 'string', maxLength: 64 },
    example: E.Event.id,
  },
  WebhookTimestamp: {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description:
      'When this attempt was signed, in Unix seconds. Refuse one more than 5 minutes from your clock (a replayed request).',
    schema: { type: 'string', pattern: '^[0-9]{1,12}$' },
    example: '1795595412',
  },
  WebhookSignature: {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">`, keyed with the decoded bytes of your `whsec_…` secret. ' +
      'For 24 hours after the secret is rolled: two of them, separated by a space (one per secret); accept when either matches.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$', maxLength: 1000 },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
};

const RESPONSES: Json = {
  '2XX': {
    description:
      'Delivered: any 2xx answer within 10 s. The body of the answer is kept (its first 1 KB) in the delivery log.',
  },
  '410': {
    description: 'Gone: the endpoint is disabled at once, and nothing more is sent to it until it is enabled again.',
  },
  default: {
    description:
      'Anything else (or no answer within 10 s, or a refused connection): retried with the same `webhook-id` on the retry schedule, for about 28 hours; an endpoint failing every attempt for 3 days is disabled.',
  },
};

/** The event envelope of one type: `data.object` the resource's schema, `previousAttributes` only where the type has them. */
export function webhookPayloadSchema(type: EventType, doc: SchemaDoc): Json {
  const resource = type.slice(0, type.indexOf('.')) as EventResource;
  const objectSchema = EVENT_OBJECT_SCHEMAS[resource];
  const previous = hasPreviousAttributes(type);
  return {
    type: 'object',
    required: ['id', 'type', 'createdAt', 'data', 'requestId'],
    properties: {
      id: doc(Event.properties.id),
      type: { type: 'string', const: type },
      createdAt: doc(Event.properties.createdAt),
      data: {
        type: 'object',
        required: previous ? ['object', 'previousAttributes'] : ['object'],
        properties: {
          object: doc(objectSchema),
          ...(previous
            ? {
                previousAttributes: {
                  ...(doc(t.Partial(objectSchema)) as Json),
                  description: 'The old value of each field of `object` that changed (`updatedAt` aside).',
                },
              }
            : {}),
        },
      },
      requestId: doc(Event.properties.requestId),
    },
  };
}

function testPayloadSchema(): Json {
  return {
    type: 'object',
    required: ['id', 'type', 'createdAt', 'data', 'requestId'],
    properties: {
      id: { type: 'string', maxLength: 64 },
      type: { type: 'string', const: TEST_EVENT_TYPE },
      createdAt: { type: 'string', format: 'date-time', maxLength: 32 },
      data: {
        type: 'object',
        required: ['object'],
        properties: {
          object: {
            type: 'object',
            required: ['endpointId', 'url', 'message'],
            properties: {
              endpointId: { type: 'string', maxLength: 64 },
              url: { type: 'string', maxLength: 2048 },
              message: { type: 'string', maxLength: 200 },
            },
          },
        },
      },
      requestId: { type: 'null' },
    },
  };
}

function webhookOperation(name: string, summary: string, description: string, schema: Json, example: Json): Json {
  return {
    post: {
      operationId: `webhook${name
        .split(/[._]/)
        .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
        .join('')}`,
      summary,
      description,
      security: [],
      parameters: Object.keys(WEBHOOK_PARAMETERS).map((p) => ({ $ref: `#/components/parameters/${p}` })),
      requestBody: { required: true, content: { 'application/json': { schema, example } } },
      responses: RESPONSES,
    },
  };
}

const article = (noun: string) => `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;

/** An event type's component name: `class.created` -> `ClassCreatedEvent`, `webhook.test` -> `WebhookTestEvent`. */
export const eventSchemaName = (type: string) =>
  `${type
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}Event`;

/**
 * The feed's `Event` as a union discriminated by `type` (`oneOf` + `discriminator`), one component per type, so a
 * client generator narrows `data.object` by `type` (docs/design/events.md). Each component is the body its
 * webhook sends.
 */
export function eventUnion(doc: SchemaDoc): { event: Json; components: Record<string, Json> } {
  const components: Record<string, Json> = {};
  const mapping: Record<string, string> = {};
  for (const type of EVENT_TYPES) {
    const name = eventSchemaName(type);
    components[name] = { ...webhookPayloadSchema(type, doc), examples: [webhookExample(type)] };
    mapping[type] = `#/components/schemas/${name}`;
  }
  components[eventSchemaName(TEST_EVENT_TYPE)] = { ...testPayloadSchema(), examples: [TEST_EXAMPLE] };
  return {
    event: {
      description:
        'What changed, with the resource as its GET returns it: one schema per `type` (new types may be added within v1: ignore the ones you do not know).',
      oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
      discriminator: { propertyName: 'type', mapping },
      examples: [webhookExample('plan.updated')],
    },
    components,
  };
}

/** The `webhooks` object: one entry per event type (`class.created`, …) and the test event, in the order of docs/design/events.md. */
export function webhooksDocument(doc: SchemaDoc): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const type of EVENT_TYPES) {
    const [noun, verb] = type.split('.') as [string, string];
    const description = [
      `Sent when ${article(noun === 'content' ? 'video' : noun)} ${VERB[verb] ?? verb}. \`data.object\` is the resource as its GET returns it${
        hasPreviousAttributes(type) ? '; `data.previousAttributes` holds the old value of every field that changed' : ''
      }.`,
      NOTE[type] ?? '',
      'Signed per Standard Webhooks: verify `webhook-signature` before trusting the body (see the description of this document).',
    ]
      .filter(Boolean)
      .join(' ');
    out[type] = webhookOperation(type, type, description, webhookPayloadSchema(type, doc), webhookExample(type));
  }
  out[TEST_EVENT_TYPE] = webhookOperation(
    TEST_EVENT_TYPE,
    TEST_EVENT_TYPE,
    'What "Send test event" in the dashboard sends, whatever types the endpoint subscribes to. It is not in the events feed.',
    testPayloadSchema(),
    TEST_EXAMPLE,
  );
  return out;
}
