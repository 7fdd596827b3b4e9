/**
 * Response records of the Storefront surface (contract §9). The storefront service
 * declares them as route responses (so the OpenAPI document is built from them) and
 * the tests check bodies against them.
 */
import { Type as t, type Static, type TString } from '@sinclair/typebox';
import { Instant, Timestamp } from './fields';

const Nullable = <T extends TString>(s: T) => t.Union([s, t.Null()]);
const Level = t.Union([t.Literal('all_levels'), t.Literal('beginner'), t.Literal('intermediate'), t.Literal('advanced')]);
const Mode = t.Union([t.Literal('broadcast'), t.Literal('two_way'), t.Literal('community'), t.Literal('coaching')]);

/** One upcoming occurrence of a public class. */
export const StorefrontClass = t.Object({
  id: t.String({ description: 'Occurrence id (occ_…)' }),
  classId: t.String(),
  classTitle: t.String(),
  discipline: Nullable(t.String()),
  level: Level,
  mode: Mode,
  startsAt: Timestamp,
  durationMinutes: t.Integer(),
  instructorId: t.String(),
  instructorName: t.String(),
}, { additionalProperties: false });
export type StorefrontClass = Static<typeof StorefrontClass>;
export const StorefrontClassList = t.Object({ classes: t.Array(StorefrontClass, { maxItems: 500 }) });
export type StorefrontClassList = Static<typeof StorefrontClassList>;

/** Query of storefrontListClasses. Unknown parameters (cache busters) are ignored. */
export const StorefrontClassQuery = t.Object({
  from: t.Optional(t.String({ ...Instant, description: 'RFC 3339 date-time with an offset; default now (earlier values are moved up to now)' })),
  to: t.Optional(t.String({ ...Instant, description: 'RFC 3339 date-time with an offset, after `from`; default from + 14 days; at most from + 90 days' })),
  discipline: t.Optional(t.String({ minLength: 1, maxLength: 60 })),
  level: t.Optional(Level),
  instructorId: t.Optional(t.String({ pattern: '^ins_[0-9A-Za-z]{1,40}$' })),
}, { additionalProperties: true });
export type StorefrontClassQuery = Static<typeof StorefrontClassQuery>;

export const StorefrontInstructor = t.Object({
  id: t.String(),
  name: t.String(),
  bio: Nullable(t.String()),
  photoUrl: Nullable(t.String()),
  disciplines: t.Array(t.String()),
}, { additionalProperties: false });
export type StorefrontInstructor = Static<typeof StorefrontInstructor>;
export const StorefrontInstructorList = t.Object({ instructors: t.Array(StorefrontInstructor) });
export type StorefrontInstructorList = Static<typeof StorefrontInstructorList>;

export const StorefrontPlan = t.Object({
  id: t.String(),
  name: t.String(),
  description: Nullable(t.String()),
  type: t.Union([t.Literal('membership'), t.Literal('class_pack'), t.Literal('drop_in')]),
  config: t.Record(t.String(), t.Unknown(), { description: 'Price and terms, by type (contract §8)' }),
}, { additionalProperties: false });
export type StorefrontPlan = Static<typeof StorefrontPlan>;
export const StorefrontPlanList = t.Object({ plans: t.Array(StorefrontPlan) });
export type StorefrontPlanList = Static<typeof StorefrontPlanList>;

const Json = t.Union([t.Record(t.String(), t.Unknown()), t.Null()]);
export const StorefrontSite = t.Object({
  title: t.String(),
  tagline: Nullable(t.String()),
  description: Nullable(t.String()),
  logoUrl: Nullable(t.String()),
  heroImageUrl: Nullable(t.String()),
  contactEmail: Nullable(t.String()),
  phone: Nullable(t.String()),
  address: Json,
  social: Json,
  publishedAt: Timestamp,
}, { additionalProperties: false });
export type StorefrontSite = Static<typeof StorefrontSite>;

export const StorefrontPolicies = t.Object({
  cancellation: Nullable(t.String()),
  lateCancelMinutes: t.Integer({ minimum: 0, description: 'Cancelling closer than this to the start counts as late; 0 for a new studio' }),
  noShow: Nullable(t.String()),
  terms: Nullable(t.String()),
  privacy: Nullable(t.String()),
  waiver: Nullable(t.String()),
  updatedAt: Timestamp,
}, { additionalProperties: false });
export type StorefrontPolicies = Static<typeof StorefrontPolicies>;

export const StorefrontConfig = t.Object({
  studio: t.Object({ id: t.String(), name: t.String(), slug: t.String() }, { additionalProperties: false }),
  timezone: t.String({ description: 'IANA time zone' }),
  currency: t.String({ pattern: '^[A-Z]{3}$' }),
  locale: t.String(),
  enabledModes: t.Array(Mode),
  branding: t.Object({ primaryColor: Nullable(t.String()), logoUrl: Nullable(t.String()) }, { additionalProperties: false }),
}, { additionalProperties: false });
export type StorefrontConfig = Static<typeof StorefrontConfig>;
