/**
 * THE operations registry. Each row is everything a route and its documentation need:
 * surface, method, path, scope, summary, the request and success schemas, the problem
 * codes of its own. Gateway routing and scopes, each service's route registration
 * (`registerOperations`), the OpenAPI documents, the activity labels and the security
 * test all derive from it. Paths use OpenAPI `{param}` syntax.
 */
import type { TObject, TSchema } from '@sinclair/typebox';
import type { EventType } from './event-types';
import { type IdKind, idPattern } from './ids';
import type { ProblemCode } from './problem';
import { Class, ClassPage, CreateClassBody, UpdateClassBody } from './schemas/classes';
import { UpdateContentBody, Video, VideoPage } from './schemas/content';
import { Coupon, CouponPage, CreateCouponBody } from './schemas/coupons';
import { Event, EventPage, EventsQuery } from './schemas/events';
import { CreateInstructorBody, Instructor, InstructorPage, UpdateInstructorBody } from './schemas/instructors';
import { KeyInfo } from './schemas/keys';
import {
  CreateLocationBody,
  CreateRoomBody,
  Location,
  LocationPage,
  Room,
  RoomPage,
  UpdateLocationBody,
  UpdateRoomBody,
} from './schemas/locations';
import { InviteMemberBody, Member, MemberPage, UpdateMemberBody } from './schemas/members';
import { PageQuery } from './schemas/page';
import { CreatePlanBody, Plan, PlanPage, UpdatePlanBody } from './schemas/plans';
import { CreateProgramBody, Program, ProgramPage, UpdateProgramBody } from './schemas/programs';
import { Sandbox } from './schemas/sandboxes';
import { Occurrence, OccurrencePage, RescheduleBody, ScheduleQuery } from './schemas/schedule';
import {
  StorefrontClassList,
  StorefrontClassQuery,
  StorefrontConfig,
  StorefrontInstructorList,
  StorefrontPlanList,
  StorefrontPolicies,
  StorefrontSite,
} from './schemas/storefront';

export const SCOPES = [
  'classes:read',
  'classes:write',
  'content:read',
  'content:write',
  'coupons:read',
  'coupons:write',
  'instructors:read',
  'instructors:write',
  'locations:read',
  'locations:write',
  'members:read',
  'members:write',
  'plans:read',
  'plans:write',
  'programs:read',
  'programs:write',
  'schedule:read',
  'schedule:write',
] as const;
/**
 * Scopes only a test key may hold (docs/design/test-mode.md): `sandbox:write` resets the key's sandbox. A live key
 * asking for one is refused at its creation.
 */
export const TEST_SCOPES = ['sandbox:write'] as const;
export type LiveScope = (typeof SCOPES)[number];
export type Scope = LiveScope | (typeof TEST_SCOPES)[number];
const ALL_SCOPES: readonly string[] = [...SCOPES, ...TEST_SCOPES];
export const isScope = (s: string): s is Scope => ALL_SCOPES.includes(s);
/** Every scope a key of this mode may hold, in order: the specification's 18, and for a test key `sandbox:write`. */
export const scopesOfMode = (mode: 'live' | 'test'): readonly Scope[] =>
  mode === 'test' ? [...SCOPES, ...TEST_SCOPES] : SCOPES;

/** Words that stand for several scopes where a person types them (the CLI's `--scopes`), as the dashboard's read-all and write-all boxes do. */
export const SCOPE_SHORTHANDS = ['all', 'read-all', 'write-all'] as const;
const shorthand = (word: string, mode: 'live' | 'test'): readonly Scope[] | null => {
  const all = scopesOfMode(mode);
  if (word === 'all') return all;
  if (word === 'read-all') return all.filter((s) => s.endsWith(':read'));
  if (word === 'write-all') return all.filter((s) => s.endsWith(':write'));
  return null;
};

/**
 * Scopes and shorthands as typed, as the scopes they name (each once, in their order); the first unknown word, if
 * any. A shorthand means every scope of its kind that a key of `mode` may hold: `all` for a test key includes
 * `sandbox:write`.
 */
export function expandScopes(
  words: readonly string[],
  mode: 'live' | 'test' = 'live',
): { scopes: Scope[]; unknown: string | null } {
  const chosen = new Set<Scope>();
  for (const w of words) {
    const named = shorthand(w, mode) ?? (isScope(w) ? [w] : null);
    if (!named) return { scopes: [], unknown: w };
    for (const s of named) chosen.add(s);
  }
  return { scopes: (ALL_SCOPES as Scope[]).filter((s) => chosen.has(s)), unknown: null };
}

/** The rule of the events operations (docs/design/events.md): any one `:read` scope will do. */
export const ANY_READ = '*:read';
/** What an operation needs: one scope, or any read scope. */
export type ScopeRule = Scope | typeof ANY_READ;
/** Whether a key holding `held` may call an operation that needs `rule` (the gateway's authorize step asks). */
export const scopeAllows = (held: readonly string[], rule: ScopeRule): boolean =>
  rule === ANY_READ ? held.some((s) => s.endsWith(':read') && isScope(s)) : held.includes(rule);

export type Surface = 'storefront' | 'management';
export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface Operation {
  readonly id: string;
  readonly surface: Surface;
  readonly method: Method;
  readonly path: string;
  /**
   * null on the Storefront surface, which needs only a publishable key, and for the key's own description, which every
   * key may read; `*:read`: any read scope.
   */
  readonly scope: ScopeRule | null;
  readonly summary: string;
  readonly description?: string;
  readonly query?: TObject;
  readonly body?: TObject;
  /** The success answer: its status and body schema. */
  readonly ok: { readonly status: 200 | 201; readonly schema: TSchema };
  /** Problem codes of this operation's own rules (the gateway's and the framing ones are derived: `problemsOf`). */
  readonly problems?: readonly ProblemCode[];
  /** Cursor-paginated (docs/design/pagination.md). */
  readonly paginated?: true;
  /**
   * A write to what the Storefront shows (classes, their occurrences, instructors, plans): once it
   * succeeds, the gateway drops the studio's cached Storefront answers on every replica.
   */
  readonly changesStorefront?: true;
  /**
   * The event types a write may record (docs/design/events.md): the write runner records what the action
   * returns and refuses a type not listed here; every write lists at least one.
   */
  readonly emits?: readonly EventType[];
  /** Works on a sandbox only: a live key is refused with 403 `test_mode_required` (docs/design/test-mode.md). */
  readonly testOnly?: true;
  /** Its answer is the calling key's own (not its studio's): never answered from the gateway's Storefront cache. */
  readonly perKey?: true;
}

/** Keeps each row's literal types (schemas included), so handlers are typed from the row. */
const op = <const O extends Operation>(o: O): O => o;
const sf = <const O extends Omit<Operation, 'surface' | 'method' | 'scope'>>(o: O) =>
  op({ ...o, surface: 'storefront', method: 'GET', scope: null } as const);
const mg = <const O extends Omit<Operation, 'surface'>>(o: O) => op({ ...o, surface: 'management' } as const);

const PLAN_CONFIGS =
  'Config by type: `membership` {priceCents ≥ 0, currency, interval week|month|year, intervalCount 1..12 (default 1), classesPerInterval 1..10000 or null (default, unlimited)}; `class_pack` {priceCents, currency, classCount 1..1000, validityDays 1..3650}; `drop_in` {priceCents, currency}. A missing, extra or out-of-range field is 422 `invalid_plan_config` with `errors`.';
const PROGRAM_PRICE =
  'A `paid` program needs a positive `priceCents` and a `currency`; a `free` one (the default) has neither, else 422 `invalid_price`. `classIds` must be classes of the studio.';
const FINAL = (what: string) => `the answer is the ${what} in its final state.`;
const EVENTS_READ =
  'Needs any one `:read` scope; a key sees only the events of the resources it may read (`class.*` needs classes:read, `occurrence.*` schedule:read, `member.*` and `membership.*` members:read, `content.*` content:read, `plan.*` plans:read, `instructor.*` instructors:read, `location.*` and `room.*` locations:read, `coupon.*` coupons:read, `program.*` programs:read).';
const EVENTS_FEED =
  'What changed in the studio, oldest first: every Management write records its events in the same transaction as its change, ' +
  'and the feed serves them in an order that never changes behind a reader (an event is served only once every transaction that could still add one before it has ended). ' +
  'Store the `id` of the last event you handled and resume with `after=<id>`: you miss nothing. `type` takes one type or a comma-separated list. ' +
  'A `cursor` carries the filters it was made with; sent with `after`, the cursor wins. A page may hold fewer events than `limit` while `next_cursor` is set (a filtered page reads a bounded stretch of the feed); null means you have reached the end for now. ' +
  `An \`after\` naming an event deleted by the 30-day retention is 410 \`events_expired\` (resync, then resume from a new event); one that is not an event of the studio, or that the key may not read, is 404. ${EVENTS_READ}`;

const KEY_INFO =
  "What the calling key is: its id and name, kind, mode (`live`, or `test` for a sandbox's key), the studio it reaches (and, in test mode, its sandbox's name and live studio), its scopes, expiry and allowed origins; never its text. Check a key with it when your integration starts.";

export const OPERATIONS = [
  sf({
    id: 'storefrontGetConfig',
    path: '/v1/config',
    summary: 'Get storefront config',
    ok: { status: 200, schema: StorefrontConfig },
    description:
      'What a studio website needs to render: studio identity, time zone, currency, locale, enabled class modes and branding.',
  }),
  sf({
    id: 'storefrontGetKey',
    path: '/v1/key',
    summary: 'Describe this key',
    ok: { status: 200, schema: KeyInfo },
    perKey: true,
    description: KEY_INFO,
  }),
  sf({
    id: 'storefrontGetSite',
    path: '/v1/site',
    summary: 'Get the public site',
    ok: { status: 200, schema: StorefrontSite },
    problems: ['site_not_published'],
    description: "The studio's published site content; 404 `site_not_published` until the studio publishes one.",
  }),
  sf({
    id: 'storefrontListClasses',
    path: '/v1/classes',
    summary: 'List upcoming classes',
    query: StorefrontClassQuery,
    ok: { status: 200, schema: StorefrontClassList },
    problems: ['validation_failed'],
    description:
      'Upcoming, non-cancelled occurrences of public classes, ordered by start time; at most 500. `to` must be after `from` and at most 90 days after it.',
  }),
  sf({
    id: 'storefrontListInstructors',
    path: '/v1/instructors',
    summary: 'List instructors',
    ok: { status: 200, schema: StorefrontInstructorList },
    description: "The studio's active instructors, ordered by name.",
  }),
  sf({
    id: 'storefrontListPlans',
    path: '/v1/plans',
    summary: 'List plans',
    ok: { status: 200, schema: StorefrontPlanList },
    description: 'Active public plans (memberships, class packs, drop-ins) with their price config.',
  }),
  sf({
    id: 'storefrontGetPolicies',
    path: '/v1/policies',
    summary: 'Get policies',
    ok: { status: 200, schema: StorefrontPolicies },
    description:
      'Cancellation, no-show, terms, privacy and waiver texts. A new studio gets null texts and `lateCancelMinutes: 0`.',
  }),

  mg({
    id: 'managementListClasses',
    method: 'GET',
    path: '/v1/classes',
    scope: 'classes:read',
    summary: 'List classes',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: ClassPage },
    description: 'Ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementCreateClass',
    emits: ['class.created', 'occurrence.created'],
    changesStorefront: true,
    method: 'POST',
    path: '/v1/classes',
    scope: 'classes:write',
    summary: 'Create a class',
    body: CreateClassBody,
    ok: { status: 201, schema: Class },
    problems: [
      'instructor_double_booked',
      'unknown_instructor',
      'unknown_plan',
      'unknown_location',
      'unknown_room',
      'unsupported_channel',
      'occurrence_in_past',
    ],
    description:
      'Creates the class and all its occurrences (`recurrence`) in one transaction: if any occurrence double-books the instructor, nothing is created (409, naming the `conflictingOccurrence`).',
  }),
  mg({
    id: 'managementGetClass',
    method: 'GET',
    path: '/v1/classes/{classId}',
    scope: 'classes:read',
    summary: 'Get a class',
    ok: { status: 200, schema: Class },
  }),
  mg({
    id: 'managementUpdateClass',
    emits: ['class.updated', 'occurrence.updated'],
    changesStorefront: true,
    method: 'PATCH',
    path: '/v1/classes/{classId}',
    scope: 'classes:write',
    summary: 'Update a class',
    body: UpdateClassBody,
    ok: { status: 200, schema: Class },
    problems: ['instructor_double_booked', 'unknown_instructor', 'unknown_plan', 'class_cancelled'],
    description:
      '`instructorId`, `durationMinutes` and `capacity` also apply to the occurrences that have not started. A cancelled class is final: a PATCH that would change it is 409 `class_cancelled`.',
  }),
  mg({
    id: 'managementCancelClass',
    emits: ['class.cancelled', 'occurrence.cancelled'],
    changesStorefront: true,
    method: 'DELETE',
    path: '/v1/classes/{classId}',
    scope: 'classes:write',
    summary: 'Cancel a class',
    ok: { status: 200, schema: Class },
    description: `The class and its future occurrences become \`cancelled\`; ${FINAL('class')}`,
  }),

  mg({
    id: 'managementListMembers',
    method: 'GET',
    path: '/v1/members',
    scope: 'members:read',
    summary: 'List members',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: MemberPage },
    description: 'Ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementInviteMember',
    emits: ['member.invited'],
    method: 'POST',
    path: '/v1/members/invites',
    scope: 'members:write',
    summary: 'Invite a member',
    body: InviteMemberBody,
    ok: { status: 201, schema: Member },
    problems: ['member_exists', 'invalid_role'],
    description:
      'The e-mail is stored lower-case; an e-mail that is already a (not cancelled) member of the studio, in any case, is 409 `member_exists`.',
  }),
  mg({
    id: 'managementGetMember',
    method: 'GET',
    path: '/v1/members/{membershipId}',
    scope: 'members:read',
    summary: 'Get a member',
    ok: { status: 200, schema: Member },
  }),
  mg({
    id: 'managementUpdateMember',
    emits: ['member.updated'],
    method: 'PATCH',
    path: '/v1/members/{membershipId}',
    scope: 'members:write',
    summary: 'Update a member',
    body: UpdateMemberBody,
    ok: { status: 200, schema: Member },
    problems: ['last_admin', 'invalid_role', 'membership_cancelled'],
    description:
      "Demoting the studio's last active admin is 409 `last_admin`. A cancelled membership is final: a PATCH that would change it is 409 `membership_cancelled`.",
  }),
  mg({
    id: 'managementCancelMembership',
    emits: ['membership.cancelled'],
    method: 'POST',
    path: '/v1/members/{membershipId}/cancel',
    scope: 'members:write',
    summary: 'Cancel a membership',
    ok: { status: 200, schema: Member },
    problems: ['last_admin'],
    description: 'Status becomes `cancelled`; cancelling the last active admin is 409 `last_admin`. No body.',
  }),

  mg({
    id: 'managementListSchedule',
    method: 'GET',
    path: '/v1/schedule',
    scope: 'schedule:read',
    summary: 'List the schedule',
    paginated: true,
    query: ScheduleQuery,
    ok: { status: 200, schema: OccurrencePage },
    problems: ['validation_failed'],
    description:
      'Occurrences ordered by startsAt, then id. Filters: `from` (inclusive), `to` (exclusive), `classId`, `instructorId`; a cursor keeps the filters it was made with.',
  }),
  mg({
    id: 'managementGetOccurrence',
    method: 'GET',
    path: '/v1/schedule/{occurrenceId}',
    scope: 'schedule:read',
    summary: 'Get an occurrence',
    ok: { status: 200, schema: Occurrence },
  }),
  mg({
    id: 'managementRescheduleOccurrence',
    emits: ['occurrence.rescheduled'],
    changesStorefront: true,
    method: 'PATCH',
    path: '/v1/schedule/{occurrenceId}',
    scope: 'schedule:write',
    summary: 'Reschedule an occurrence',
    body: RescheduleBody,
    ok: { status: 200, schema: Occurrence },
    problems: ['instructor_double_booked', 'occurrence_cancelled', 'occurrence_in_past'],
  }),

  mg({
    id: 'managementListContent',
    method: 'GET',
    path: '/v1/content',
    scope: 'content:read',
    summary: 'List videos',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: VideoPage },
    description: 'Videos that are not deleted, ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementGetContent',
    method: 'GET',
    path: '/v1/content/{contentId}',
    scope: 'content:read',
    summary: 'Get a video',
    ok: { status: 200, schema: Video },
    description: 'A deleted video is 404.',
  }),
  mg({
    id: 'managementUpdateContent',
    emits: ['content.updated'],
    method: 'PATCH',
    path: '/v1/content/{contentId}',
    scope: 'content:write',
    summary: 'Update a video',
    body: UpdateContentBody,
    ok: { status: 200, schema: Video },
    problems: ['unknown_instructor'],
    description:
      'Accepts `title`, `description`, `visibility` and `instructorId` (an active instructor of the studio, or null).',
  }),
  mg({
    id: 'managementDeleteContent',
    emits: ['content.deleted'],
    method: 'DELETE',
    path: '/v1/content/{contentId}',
    scope: 'content:write',
    summary: 'Delete a video',
    ok: { status: 200, schema: Video },
    description: `The video is 404 afterwards; ${FINAL('video')}`,
  }),

  mg({
    id: 'managementListPlans',
    method: 'GET',
    path: '/v1/plans',
    scope: 'plans:read',
    summary: 'List plans',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: PlanPage },
    description: 'Active and archived plans, ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementCreatePlan',
    emits: ['plan.created'],
    changesStorefront: true,
    method: 'POST',
    path: '/v1/plans',
    scope: 'plans:write',
    summary: 'Create a plan',
    body: CreatePlanBody,
    ok: { status: 201, schema: Plan },
    problems: ['invalid_plan_config'],
    description: PLAN_CONFIGS,
  }),
  mg({
    id: 'managementGetPlan',
    method: 'GET',
    path: '/v1/plans/{planId}',
    scope: 'plans:read',
    summary: 'Get a plan',
    ok: { status: 200, schema: Plan },
  }),
  mg({
    id: 'managementUpdatePlan',
    emits: ['plan.updated'],
    changesStorefront: true,
    method: 'PATCH',
    path: '/v1/plans/{planId}',
    scope: 'plans:write',
    summary: 'Update a plan',
    body: UpdatePlanBody,
    ok: { status: 200, schema: Plan },
    problems: ['invalid_plan_config'],
    description: `\`type\` cannot change; a new \`config\` is checked against the stored type. ${PLAN_CONFIGS}`,
  }),
  mg({
    id: 'managementArchivePlan',
    emits: ['plan.archived'],
    changesStorefront: true,
    method: 'DELETE',
    path: '/v1/plans/{planId}',
    scope: 'plans:write',
    summary: 'Archive a plan',
    ok: { status: 200, schema: Plan },
    description: `The plan becomes \`archived\` (it stays listed); ${FINAL('plan')}`,
  }),

  mg({
    id: 'managementListInstructors',
    method: 'GET',
    path: '/v1/instructors',
    scope: 'instructors:read',
    summary: 'List instructors',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: InstructorPage },
    description: 'Every instructor of the studio, active or not, ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementCreateInstructor',
    emits: ['instructor.created'],
    changesStorefront: true,
    method: 'POST',
    path: '/v1/instructors',
    scope: 'instructors:write',
    summary: 'Create an instructor',
    body: CreateInstructorBody,
    ok: { status: 201, schema: Instructor },
  }),
  mg({
    id: 'managementGetInstructor',
    method: 'GET',
    path: '/v1/instructors/{instructorId}',
    scope: 'instructors:read',
    summary: 'Get an instructor',
    ok: { status: 200, schema: Instructor },
  }),
  mg({
    id: 'managementUpdateInstructor',
    emits: ['instructor.updated'],
    changesStorefront: true,
    method: 'PATCH',
    path: '/v1/instructors/{instructorId}',
    scope: 'instructors:write',
    summary: 'Update an instructor',
    body: UpdateInstructorBody,
    ok: { status: 200, schema: Instructor },
    description: 'Only the fields sent change.',
  }),

  mg({
    id: 'managementListLocations',
    method: 'GET',
    path: '/v1/locations',
    scope: 'locations:read',
    summary: 'List locations',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: LocationPage },
    description: 'Live locations, ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementCreateLocation',
    emits: ['location.created'],
    method: 'POST',
    path: '/v1/locations',
    scope: 'locations:write',
    summary: 'Create a location',
    body: CreateLocationBody,
    ok: { status: 201, schema: Location },
    description: "`timezone` is an IANA name (default: the studio's).",
  }),
  mg({
    id: 'managementGetLocation',
    method: 'GET',
    path: '/v1/locations/{locationId}',
    scope: 'locations:read',
    summary: 'Get a location',
    ok: { status: 200, schema: Location },
    description: 'A deleted location is 404.',
  }),
  mg({
    id: 'managementUpdateLocation',
    emits: ['location.updated'],
    method: 'PATCH',
    path: '/v1/locations/{locationId}',
    scope: 'locations:write',
    summary: 'Update a location',
    body: UpdateLocationBody,
    ok: { status: 200, schema: Location },
  }),
  mg({
    id: 'managementDeleteLocation',
    emits: ['location.deleted', 'room.deleted'],
    method: 'DELETE',
    path: '/v1/locations/{locationId}',
    scope: 'locations:write',
    summary: 'Delete a location',
    ok: { status: 200, schema: Location },
    problems: ['last_venue', 'venue_in_use'],
    description: `The location and its rooms become \`deleted\` (404 afterwards); ${FINAL('location')} The studio's last live location cannot be deleted (409 \`last_venue\`), nor one where live occurrences are still to come (409 \`venue_in_use\`).`,
  }),
  mg({
    id: 'managementListRooms',
    method: 'GET',
    path: '/v1/locations/{locationId}/rooms',
    scope: 'locations:read',
    summary: 'List the rooms of a location',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: RoomPage },
    description: 'Live rooms, ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementCreateRoom',
    emits: ['room.created'],
    method: 'POST',
    path: '/v1/locations/{locationId}/rooms',
    scope: 'locations:write',
    summary: 'Create a room',
    body: CreateRoomBody,
    ok: { status: 201, schema: Room },
  }),
  mg({
    id: 'managementGetRoom',
    method: 'GET',
    path: '/v1/locations/{locationId}/rooms/{roomId}',
    scope: 'locations:read',
    summary: 'Get a room',
    ok: { status: 200, schema: Room },
    description: 'A deleted room, or a room of a deleted location, is 404.',
  }),
  mg({
    id: 'managementUpdateRoom',
    emits: ['room.updated'],
    method: 'PATCH',
    path: '/v1/locations/{locationId}/rooms/{roomId}',
    scope: 'locations:write',
    summary: 'Update a room',
    body: UpdateRoomBody,
    ok: { status: 200, schema: Room },
  }),
  mg({
    id: 'managementDeleteRoom',
    emits: ['room.deleted'],
    method: 'DELETE',
    path: '/v1/locations/{locationId}/rooms/{roomId}',
    scope: 'locations:write',
    summary: 'Delete a room',
    ok: { status: 200, schema: Room },
    problems: ['venue_in_use'],
    description: `The room becomes \`deleted\` (404 afterwards); ${FINAL('room')} A room where live occurrences are still to come cannot be deleted (409 \`venue_in_use\`).`,
  }),

  mg({
    id: 'managementListCoupons',
    method: 'GET',
    path: '/v1/coupons',
    scope: 'coupons:read',
    summary: 'List coupons',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: CouponPage },
    description: 'Active and archived coupons, ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementCreateCoupon',
    emits: ['coupon.created'],
    method: 'POST',
    path: '/v1/coupons',
    scope: 'coupons:write',
    summary: 'Create a coupon',
    body: CreateCouponBody,
    ok: { status: 201, schema: Coupon },
    problems: ['coupon_code_taken', 'invalid_coupon_config'],
    description:
      "`code` is stored upper-case and must not be the code of another active coupon of the studio (case-insensitive); an archived coupon's code can be reused. `expiresAt`, when set, is in the future.",
  }),
  mg({
    id: 'managementGetCoupon',
    method: 'GET',
    path: '/v1/coupons/{couponId}',
    scope: 'coupons:read',
    summary: 'Get a coupon',
    ok: { status: 200, schema: Coupon },
  }),
  mg({
    id: 'managementArchiveCoupon',
    emits: ['coupon.archived'],
    method: 'DELETE',
    path: '/v1/coupons/{couponId}',
    scope: 'coupons:write',
    summary: 'Archive a coupon',
    ok: { status: 200, schema: Coupon },
    description: `The coupon becomes \`archived\` (it stays listed); ${FINAL('coupon')}`,
  }),

  mg({
    id: 'managementListPrograms',
    method: 'GET',
    path: '/v1/programs',
    scope: 'programs:read',
    summary: 'List programs',
    paginated: true,
    query: PageQuery,
    ok: { status: 200, schema: ProgramPage },
    description: 'Ordered by createdAt, then id.',
  }),
  mg({
    id: 'managementCreateProgram',
    emits: ['program.created'],
    method: 'POST',
    path: '/v1/programs',
    scope: 'programs:write',
    summary: 'Create a program',
    body: CreateProgramBody,
    ok: { status: 201, schema: Program },
    problems: ['invalid_price'],
    description: PROGRAM_PRICE,
  }),
  mg({
    id: 'managementGetProgram',
    method: 'GET',
    path: '/v1/programs/{programId}',
    scope: 'programs:read',
    summary: 'Get a program',
    ok: { status: 200, schema: Program },
  }),
  mg({
    id: 'managementUpdateProgram',
    emits: ['program.updated'],
    method: 'PATCH',
    path: '/v1/programs/{programId}',
    scope: 'programs:write',
    summary: 'Update a program',
    body: UpdateProgramBody,
    ok: { status: 200, schema: Program },
    problems: ['invalid_price'],
    description: `The stored program overlaid with the fields sent must satisfy the price rule (switching to free: send \`priceCents\` and \`currency\` as null). ${PROGRAM_PRICE}`,
  }),

  mg({
    id: 'managementListEvents',
    method: 'GET',
    path: '/v1/events',
    scope: ANY_READ,
    summary: 'List events',
    paginated: true,
    query: EventsQuery,
    ok: { status: 200, schema: EventPage },
    problems: ['validation_failed', 'not_found', 'events_expired'],
    description: EVENTS_FEED,
  }),
  mg({
    id: 'managementGetEvent',
    method: 'GET',
    path: '/v1/events/{eventId}',
    scope: ANY_READ,
    summary: 'Get an event',
    ok: { status: 200, schema: Event },
    description: `One event of the feed. ${EVENTS_READ} An event the key may not read, or another studio's, is 404.`,
  }),

  mg({
    id: 'managementGetKey',
    method: 'GET',
    path: '/v1/key',
    scope: null,
    summary: 'Describe this key',
    ok: { status: 200, schema: KeyInfo },
    perKey: true,
    description: `${KEY_INFO} Needs no scope: a secret key holding none may call it.`,
  }),
  mg({
    id: 'managementResetSandbox',
    changesStorefront: true,
    method: 'POST',
    path: '/v1/sandbox/reset',
    scope: 'sandbox:write',
    testOnly: true,
    summary: "Reset the key's sandbox",
    ok: { status: 200, schema: Sandbox },
    description:
      "Test mode only (docs/design/test-mode.md): deletes every record, event, idempotency record and webhook delivery of the test key's sandbox, keeps its keys and webhook endpoints, and seeds it again relative to now (instructors, locations, a month of classes, plans, coupons, programs, videos, a published site and policies). Every gateway drops the sandbox's cached Storefront answers before the answer. For CI: reset, then run your tests. Records no event: the feed starts again empty, so an `after` from before the reset is 404. Needs a test secret key (`svc_sk_test_…`) holding `sandbox:write`; a live key is 403 `test_mode_required`.",
  }),
] as const;

export type AnyOperation = (typeof OPERATIONS)[number];
export type OperationId = AnyOperation['id'];
export type OperationOf<Id extends OperationId> = Extract<AnyOperation, { id: Id }>;
export type OperationIdOf<S extends Surface> = Extract<AnyOperation, { surface: S }>['id'];

const byId = new Map<string, Operation>(OPERATIONS.map((o) => [o.id, o]));
export function operation<Id extends OperationId>(id: Id): OperationOf<Id> {
  return byId.get(id) as OperationOf<Id>;
}
export const operationsOf = (surface: Surface): Operation[] => OPERATIONS.filter((o) => o.surface === surface);

/** `/v1/classes/{classId}` -> `/v1/classes/:classId` for Elysia. */
export const elysiaPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** The resource an `{…Id}` path parameter names, hence the prefix its ids carry. */
const PARAM_KINDS: Record<string, IdKind> = {
  classId: 'class',
  membershipId: 'member',
  occurrenceId: 'occurrence',
  contentId: 'content',
  planId: 'plan',
  instructorId: 'instructor',
  locationId: 'location',
  roomId: 'room',
  couponId: 'coupon',
  programId: 'program',
  eventId: 'event',
};
/** The path parameters of an operation with the id pattern each must match (else 404 without a query). */
export function pathParams(o: Operation): { name: string; kind: IdKind; pattern: string }[] {
  return [...o.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => {
    const kind = PARAM_KINDS[name!];
    if (!kind) throw new Error(`operations: no id kind for path parameter ${name} of ${o.id}`);
    return { name: name!, kind, pattern: idPattern(kind) };
  });
}

const WRITES: ReadonlySet<string> = new Set<Method>(['POST', 'PATCH', 'PUT', 'DELETE']);
/** Whether a request's method writes (a service's write guard asks before any route is matched). */
export const isWriteMethod = (method: string) => WRITES.has(method);
export const isWrite = (o: Operation) => isWriteMethod(o.method);

/**
 * Every problem code an operation can answer, by who answers it: the gateway (key,
 * scope, rate limit, upstream), the service's framing (idempotency, content type, size,
 * validation, cursor, path ids) and the operation's own rules.
 */
export function problemsOf(o: Operation): ProblemCode[] {
  const codes: ProblemCode[] = [
    'api_key_missing',
    'api_key_invalid',
    'api_key_revoked',
    'api_key_expired',
    'api_key_wrong_kind',
    'studio_required',
    'rate_limited',
    // a declared body over 1 MiB is refused whatever the method, a read's included (it is never read or sent on)
    'payload_too_large',
    // the target and the headers passed on, over what a service accepts once the gateway's are added
    'request_headers_too_large',
    'internal_error',
    'service_unavailable',
    'upstream_timeout',
  ];
  if (o.scope) codes.push('scope_required');
  if (o.testOnly) codes.push('test_mode_required');
  if (o.surface === 'storefront') codes.push('origin_not_allowed');
  if (isWrite(o)) {
    codes.push(
      'idempotency_key_required',
      'idempotency_key_invalid',
      'idempotency_key_reused',
      'idempotency_request_in_progress',
      'unsupported_media_type',
      // a body that does not arrive whole within REQUEST_BODY_TIMEOUT_MS
      'request_timeout',
      'malformed_json',
      'conflict',
      'unknown_reference',
    );
  }
  // a query parameter the operation does not declare is 422 too, on a list that only pages as on any other
  if (o.body || o.query) codes.push('validation_failed');
  if (o.paginated) codes.push('invalid_cursor');
  if (o.path.includes('{')) codes.push('not_found');
  codes.push(...(o.problems ?? []));
  return [...new Set(codes)];
}
