/**
 * One realistic example of every request body and success response record of the API,
 * keyed by the schema's export name (the OpenAPI component name). The `satisfies` clause
 * makes the compiler check each example against its schema's static type; the test
 * `shared/test/examples.test.ts` checks them at run time against the schemas themselves
 * (patterns, ranges, lengths, formats), and that every body and record has one.
 *
 * `…Page` schemas have no entry: their example is `{ data: [<record>], next_cursor: null }`.
 *
 * The data tells one story: the studio "Lotus Yoga" in Berlin (EUR), its Kreuzberg location
 * and Sun Room, the instructor Mira Hoffmann, an unlimited monthly membership, a weekly
 * Vinyasa Flow class and its first occurrence, a member, a coupon, a course and a video.
 * Every id that one example refers to is the id of another example.
 */
import type { Static } from '@sinclair/typebox';
import type { Class, CreateClassBody, UpdateClassBody } from './classes';
import type { UpdateContentBody, Video } from './content';
import type { Coupon, CreateCouponBody, PercentCouponConfig } from './coupons';
import type { Event } from './events';
import type { CreateInstructorBody, Instructor, UpdateInstructorBody } from './instructors';
import type { KeyInfo } from './keys';
import type {
  Address,
  CreateLocationBody,
  CreateRoomBody,
  Location,
  Room,
  UpdateLocationBody,
  UpdateRoomBody,
} from './locations';
import type { InviteMemberBody, Member, UpdateMemberBody } from './members';
import type { CreatePlanBody, MembershipConfig, Plan, UpdatePlanBody } from './plans';
import type { CreateProgramBody, Program, UpdateProgramBody } from './programs';
import type { Sandbox } from './sandboxes';
import type { Occurrence, RescheduleBody } from './schedule';
import type {
  StorefrontClassList,
  StorefrontConfig,
  StorefrontInstructorList,
  StorefrontPlanList,
  StorefrontPolicies,
  StorefrontSite,
} from './storefront';

/** What every example must be: the static type of the schema of the same name. */
export interface Examples {
  // classes
  CreateClassBody: Static<typeof CreateClassBody>;
  UpdateClassBody: Static<typeof UpdateClassBody>;
  Class: Static<typeof Class>;
  // schedule
  RescheduleBody: Static<typeof RescheduleBody>;
  Occurrence: Static<typeof Occurrence>;
  // members
  InviteMemberBody: Static<typeof InviteMemberBody>;
  UpdateMemberBody: Static<typeof UpdateMemberBody>;
  Member: Static<typeof Member>;
  // instructors
  CreateInstructorBody: Static<typeof CreateInstructorBody>;
  UpdateInstructorBody: Static<typeof UpdateInstructorBody>;
  Instructor: Static<typeof Instructor>;
  // locations and rooms
  CreateLocationBody: Static<typeof CreateLocationBody>;
  UpdateLocationBody: Static<typeof UpdateLocationBody>;
  Location: Static<typeof Location>;
  CreateRoomBody: Static<typeof CreateRoomBody>;
  UpdateRoomBody: Static<typeof UpdateRoomBody>;
  Room: Static<typeof Room>;
  // plans
  CreatePlanBody: Static<typeof CreatePlanBody>;
  UpdatePlanBody: Static<typeof UpdatePlanBody>;
  Plan: Static<typeof Plan>;
  // coupons
  CreateCouponBody: Static<typeof CreateCouponBody>;
  Coupon: Static<typeof Coupon>;
  // programs
  CreateProgramBody: Static<typeof CreateProgramBody>;
  UpdateProgramBody: Static<typeof UpdateProgramBody>;
  Program: Static<typeof Program>;
  // content
  UpdateContentBody: Static<typeof UpdateContentBody>;
  Video: Static<typeof Video>;
  // events
  Event: Static<typeof Event>;
  // storefront
  StorefrontConfig: Static<typeof StorefrontConfig>;
  StorefrontSite: Static<typeof StorefrontSite>;
  StorefrontClassList: Static<typeof StorefrontClassList>;
  StorefrontInstructorList: Static<typeof StorefrontInstructorList>;
  StorefrontPlanList: Static<typeof StorefrontPlanList>;
  StorefrontPolicies: Static<typeof StorefrontPolicies>;
  // test mode
  Sandbox: Static<typeof Sandbox>;
  // keys
  KeyInfo: Static<typeof KeyInfo>;
}

/** Ids of the story: prefix + 22 base62 characters of a UUIDv7 stamped at the record's `createdAt`. */
const ID = {
  studio: 'std_034OZuSKrHH6DL4GP7n9lb',
  sandbox: 'std_034OZv3qLJ1TmcZx8Fhd2Q',
  key: 'key_034OZwB7pPfqg1oYpY3s0n',
  location: 'loc_034OahR1gsLCeNP6WMCf1f',
  room: 'room_034Oal9LGAKJpvayUB030A',
  instructor: 'ins_034PBlth6FYks2Mbjg82RS',
  plan: 'pln_034S7ZusFUUw1XHjUJCHrr',
  video: 'vid_034n4TujCFeur3akVr0rZx',
  member: 'mem_034qZOe5r7TnPKafHP8PjB',
  coupon: 'cpn_034v5LkKh3FWEbNB1WLTAc',
  class: 'cls_034zoUlmwh6jfP3jVSBhrI',
  occurrence: 'occ_034zoUlmwh72aSJttDkYqw',
  program: 'prg_0350KStcpXfjc4ur9mjB5R',
  event: 'evt_034zoUlmwbH8kTrzMZd6fq',
} as const;

/** First occurrence of the weekly class: Tuesday 1 December 2026, 19:00 in Berlin. */
const FIRST_START = '2027-03-02T18:00:00.000Z';

const ADDRESS = {
  line1: 'Oranienstraße 25',
  line2: 'Hinterhaus, 2. OG',
  city: 'Berlin',
  postalCode: '10999',
  country: 'DE',
} satisfies Static<typeof Address>;

const MEMBERSHIP_CONFIG = {
  priceCents: 12900,
  currency: 'EUR',
  interval: 'month',
  intervalCount: 1,
  classesPerInterval: null,
} satisfies Static<typeof MembershipConfig>;

const COUPON_CONFIG = { kind: 'percent', percentOff: 20 } satisfies Static<typeof PercentCouponConfig>;

const STORY = {
  CreateClassBody: {
    title: 'Vinyasa Flow',
    mode: 'two_way',
    instructorId: ID.instructor,
    startsAt: FIRST_START,
    durationMinutes: 60,
    discipline: 'vinyasa',
    level: 'all_levels',
    capacity: 20,
    planIds: [ID.plan],
    locationId: ID.location,
    roomId: ID.room,
    recurrence: { intervalDays: 7, count: 8 },
  },
  UpdateClassBody: {
    title: 'Vinyasa Flow & Meditation',
    durationMinutes: 75,
    capacity: 18,
  },
  Class: {
    id: ID.class,
    title: 'Vinyasa Flow',
    mode: 'two_way',
    instructorId: ID.instructor,
    startsAt: FIRST_START,
    durationMinutes: 60,
    discipline: 'vinyasa',
    level: 'all_levels',
    capacity: 20,
    visibility: 'public',
    planIds: [ID.plan],
    locationId: ID.location,
    roomId: ID.room,
    recurrence: { intervalDays: 7, count: 8 },
    status: 'scheduled',
    occurrenceCount: 8,
    nextOccurrenceAt: FIRST_START,
    cancelledAt: null,
    createdAt: '2026-11-18T16:20:34.781Z',
    updatedAt: '2026-11-18T16:20:34.781Z',
  },

  RescheduleBody: {
    startsAt: '2027-03-03T18:00:00.000Z',
    durationMinutes: 60,
  },
  Occurrence: {
    id: ID.occurrence,
    classId: ID.class,
    title: 'Vinyasa Flow',
    mode: 'two_way',
    startsAt: FIRST_START,
    endsAt: '2027-03-02T19:00:00.000Z',
    durationMinutes: 60,
    instructorId: ID.instructor,
    locationId: ID.location,
    roomId: ID.room,
    capacity: 20,
    status: 'scheduled',
    cancelledAt: null,
    createdAt: '2026-11-18T16:20:34.781Z',
    updatedAt: '2026-11-18T16:20:34.781Z',
  },

  InviteMemberBody: {
    email: 'jonas.weber@example.com',
    name: 'Jonas Weber',
    role: 'member',
  },
  UpdateMemberBody: {
    name: 'Jonas Weber',
    role: 'front_desk',
  },
  Member: {
    id: ID.member,
    email: 'jonas.weber@example.com',
    name: 'Jonas Weber',
    role: 'member',
    status: 'active',
    invitedAt: '2026-11-02T11:07:52.140Z',
    cancelledAt: null,
    createdAt: '2026-11-02T11:07:52.140Z',
    updatedAt: '2026-11-03T07:55:41.229Z',
  },

  CreateInstructorBody: {
    name: 'Mira Hoffmann',
    email: 'mira@lotusyoga.example',
    bio: 'Mira has taught vinyasa and yin yoga in Berlin since 2014. Her classes link breath and movement at a calm, steady pace and welcome every level.',
    photoUrl: 'https://cdn.lotusyoga.example/instructors/mira-hoffmann.jpg',
    disciplines: ['vinyasa', 'yin', 'meditation'],
  },
  UpdateInstructorBody: {
    disciplines: ['vinyasa', 'yin', 'meditation', 'pranayama'],
  },
  Instructor: {
    id: ID.instructor,
    name: 'Mira Hoffmann',
    email: 'mira@lotusyoga.example',
    bio: 'Mira has taught vinyasa and yin yoga in Berlin since 2014. Her classes link breath and movement at a calm, steady pace and welcome every level.',
    photoUrl: 'https://cdn.lotusyoga.example/instructors/mira-hoffmann.jpg',
    disciplines: ['vinyasa', 'yin', 'meditation'],
    active: true,
    createdAt: '2026-09-15T10:12:48.263Z',
    updatedAt: '2026-11-05T17:30:02.954Z',
  },

  CreateLocationBody: {
    name: 'Lotus Yoga Kreuzberg',
    timezone: 'Europe/Berlin',
    address: ADDRESS,
  },
  UpdateLocationBody: {
    name: 'Lotus Yoga Kreuzberg (Oranienstraße)',
  },
  Location: {
    id: ID.location,
    name: 'Lotus Yoga Kreuzberg',
    timezone: 'Europe/Berlin',
    address: ADDRESS,
    status: 'live',
    deletedAt: null,
    createdAt: '2026-09-14T09:02:11.418Z',
    updatedAt: '2026-09-14T09:02:11.418Z',
  },
  CreateRoomBody: {
    name: 'Sun Room',
    capacity: 24,
  },
  UpdateRoomBody: {
    capacity: 22,
  },
  Room: {
    id: ID.room,
    locationId: ID.location,
    name: 'Sun Room',
    capacity: 24,
    status: 'live',
    deletedAt: null,
    createdAt: '2026-09-14T09:04:37.905Z',
    updatedAt: '2026-09-14T09:04:37.905Z',
  },

  CreatePlanBody: {
    name: 'Unlimited Monthly',
    type: 'membership',
    config: MEMBERSHIP_CONFIG,
    description:
      'Unlimited studio and live-stream classes, billed monthly. Cancel any time before your next billing date.',
  },
  UpdatePlanBody: {
    config: { priceCents: 13900, currency: 'EUR', interval: 'month' } satisfies Static<typeof MembershipConfig>,
  },
  Plan: {
    id: ID.plan,
    name: 'Unlimited Monthly',
    type: 'membership',
    config: MEMBERSHIP_CONFIG,
    description:
      'Unlimited studio and live-stream classes, billed monthly. Cancel any time before your next billing date.',
    visibility: 'public',
    status: 'active',
    archivedAt: null,
    createdAt: '2026-09-20T13:41:05.527Z',
    updatedAt: '2026-09-20T13:41:05.527Z',
  },

  CreateCouponBody: {
    code: 'WELCOME20',
    config: COUPON_CONFIG,
    maxRedemptions: 100,
    expiresAt: '2027-12-31T22:59:59.000Z',
  },
  Coupon: {
    id: ID.coupon,
    code: 'WELCOME20',
    config: COUPON_CONFIG,
    maxRedemptions: 100,
    expiresAt: '2027-12-31T22:59:59.000Z',
    status: 'active',
    archivedAt: null,
    createdAt: '2026-11-10T09:15:26.604Z',
    updatedAt: '2026-11-10T09:15:26.604Z',
  },

  CreateProgramBody: {
    name: 'Yoga Foundations',
    description:
      'A four-week course for new students: alignment, breath and the core vinyasa sequences, one class a week.',
    pricing: 'paid',
    priceCents: 8900,
    currency: 'EUR',
    classIds: [ID.class],
  },
  UpdateProgramBody: {
    priceCents: 7900,
  },
  Program: {
    id: ID.program,
    name: 'Yoga Foundations',
    description:
      'A four-week course for new students: alignment, breath and the core vinyasa sequences, one class a week.',
    pricing: 'paid',
    priceCents: 8900,
    currency: 'EUR',
    classIds: [ID.class],
    status: 'active',
    createdAt: '2026-11-19T14:03:17.332Z',
    updatedAt: '2026-11-19T14:03:17.332Z',
  },

  UpdateContentBody: {
    title: 'Yin Yoga for Hips and Lower Back',
    visibility: 'public',
  },
  Video: {
    id: ID.video,
    title: 'Yin Yoga for Hips and Lower Back',
    description:
      'A slow 45-minute yin practice with long, supported holds. Have two blocks and a bolster or firm cushion ready.',
    durationSeconds: 2700,
    instructorId: ID.instructor,
    visibility: 'members_only',
    status: 'ready',
    deletedAt: null,
    createdAt: '2026-10-27T07:48:59.071Z',
    updatedAt: '2026-10-27T08:02:14.380Z',
  },

  StorefrontConfig: {
    studio: { id: ID.studio, name: 'Lotus Yoga', slug: 'lotus-yoga' },
    timezone: 'Europe/Berlin',
    currency: 'EUR',
    locale: 'de-DE',
    enabledModes: ['broadcast', 'two_way', 'community'],
    branding: { primaryColor: '#6B4FA0', logoUrl: 'https://cdn.lotusyoga.example/brand/logo.svg' },
  },
  StorefrontSite: {
    title: 'Lotus Yoga',
    tagline: 'Yoga for every body in the heart of Kreuzberg',
    description:
      'Small classes, experienced teachers and a bright studio two minutes from Moritzplatz. Join us on the mat or live from home.',
    logoUrl: 'https://cdn.lotusyoga.example/brand/logo.svg',
    heroImageUrl: 'https://cdn.lotusyoga.example/brand/hero-sun-room.jpg',
    contactEmail: 'hello@lotusyoga.example',
    phone: '+49 30 61207485',
    address: ADDRESS,
    social: {
      instagram: 'https://www.instagram.com/lotusyoga.berlin',
      youtube: 'https://www.youtube.com/@lotusyogaberlin',
    },
    publishedAt: '2026-10-01T10:00:00.000Z',
  },
  StorefrontClassList: {
    classes: [
      {
        id: ID.occurrence,
        classId: ID.class,
        classTitle: 'Vinyasa Flow',
        discipline: 'vinyasa',
        level: 'all_levels',
        mode: 'two_way',
        startsAt: FIRST_START,
        durationMinutes: 60,
        instructorId: ID.instructor,
        instructorName: 'Mira Hoffmann',
      },
    ],
  },
  StorefrontInstructorList: {
    instructors: [
      {
        id: ID.instructor,
        name: 'Mira Hoffmann',
        bio: 'Mira has taught vinyasa and yin yoga in Berlin since 2014. Her classes link breath and movement at a calm, steady pace and welcome every level.',
        photoUrl: 'https://cdn.lotusyoga.example/instructors/mira-hoffmann.jpg',
        disciplines: ['vinyasa', 'yin', 'meditation'],
      },
    ],
  },
  StorefrontPlanList: {
    plans: [
      {
        id: ID.plan,
        name: 'Unlimited Monthly',
        description:
          'Unlimited studio and live-stream classes, billed monthly. Cancel any time before your next billing date.',
        type: 'membership',
        config: MEMBERSHIP_CONFIG,
      },
    ],
  },
  KeyInfo: {
    id: ID.key,
    name: 'booking-sync',
    kind: 'secret',
    mode: 'live',
    studio: { id: ID.studio, name: 'Lotus Yoga' },
    sandbox: null,
    scopes: ['classes:read', 'classes:write', 'schedule:read'],
    expiresAt: null,
    allowedOrigins: null,
  },
  Sandbox: {
    id: ID.sandbox,
    name: 'default',
    liveStudioId: ID.studio,
    studioName: 'Lotus Yoga (test)',
    resetAt: '2026-10-01T09:52:40.118Z',
    seeded: {
      instructors: 4,
      locations: 2,
      rooms: 3,
      plans: 3,
      classes: 6,
      occurrences: 65,
      members: 3,
      coupons: 2,
      programs: 2,
      videos: 3,
    },
  },
  StorefrontPolicies: {
    cancellation: 'Cancel up to 12 hours before class and the class is credited back to you.',
    lateCancelMinutes: 720,
    noShow: 'A booked class missed without cancelling counts as attended; on a class pack it uses one class.',
    terms: 'Memberships renew automatically each billing period until cancelled. Prices include German VAT.',
    privacy: 'We use your name and email only to manage your bookings and never share them with third parties.',
    waiver: null,
    updatedAt: '2026-10-01T09:48:12.506Z',
  },
} satisfies Omit<Examples, 'Event'>;

/** Every example; the event is the Vinyasa Flow class's creation as the feed (and a webhook) tells it. */
export const EXAMPLES = {
  ...STORY,
  Event: {
    id: ID.event,
    type: 'class.created',
    createdAt: STORY.Class.createdAt,
    data: { object: STORY.Class },
    requestId: 'req_mhk2x1a90001a2b3c4',
  },
} satisfies Examples;
