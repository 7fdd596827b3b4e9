/**
 * Response records of the Storefront surface (docs/design/storefront.md). The storefront service
 * declares them as route responses (so the OpenAPI document is built from them) and
 * the tests check bodies against them.
 */
import { type Static, type TString, Type as t } from '@sinclair/typebox';
import { IdOut, MAX_URL_LENGTH, QueryInstant, Text, Timestamp } from './fields';
import { Address } from './locations';
import { PlanConfig } from './plans';

const Nullable = <T extends TString>(s: T) => t.Union([s, t.Null()]);
const Level = t.Union([
  t.Literal('all_levels'),
  t.Literal('beginner'),
  t.Literal('intermediate'),
  t.Literal('advanced'),
]);
const Mode = t.Union([t.Literal('broadcast'), t.Literal('two_way'), t.Literal('community'), t.Literal('coaching')]);

/** One upcoming occurrence of a public class. */
export const StorefrontClass = t.Object(
  {
    id: IdOut('Occurrence id (occ_…)'),
    classId: IdOut(),
    classTitle: t.String({ maxLength: 200 }),
    discipline: t.String({
      maxLength: 60,
      description:
        "The class's discipline label; an empty string when the studio gave it none (a string, as the specification types it)",
    }),
    level: Level,
    mode: Mode,
    startsAt: Timestamp,
    durationMinutes: t.Integer(),
    instructorId: IdOut(),
    instructorName: t.String({ maxLength: 120 }),
  },
  { additionalProperties: false },
);
export type StorefrontClass = Static<typeof StorefrontClass>;
export const StorefrontClassList = t.Object({ classes: t.Array(StorefrontClass, { maxItems: 500 }) });
export type StorefrontClassList = Static<typeof StorefrontClassList>;

/** Query of storefrontListClasses. Unknown parameters (cache busters) are ignored. */
export const StorefrontClassQuery = t.Object(
  {
    from: t.Optional(
      QueryInstant(
        'RFC 3339 date-time with an offset, inclusive; default now. Earlier values list from now on, and `to` is judged from `from` as sent.',
      ),
    ),
    to: t.Optional(
      QueryInstant(
        'RFC 3339 date-time with an offset, exclusive, after `from`; default from + 14 days; at most from + 90 days (years past 9999 are moved back to 9999)',
      ),
    ),
    discipline: t.Optional(Text(60, { minLength: 1 })),
    level: t.Optional(Level),
    instructorId: t.Optional(t.String({ pattern: '^ins_[0-9A-Za-z]{1,40}$', maxLength: 44 })),
  },
  { additionalProperties: true },
);
export type StorefrontClassQuery = Static<typeof StorefrontClassQuery>;

export const StorefrontInstructor = t.Object(
  {
    id: IdOut(),
    name: t.String({ maxLength: 120 }),
    bio: Nullable(t.String({ maxLength: 2000 })),
    photoUrl: Nullable(t.String({ maxLength: MAX_URL_LENGTH })),
    disciplines: t.Array(t.String({ maxLength: 60 }), { maxItems: 50 }),
  },
  { additionalProperties: false },
);
export type StorefrontInstructor = Static<typeof StorefrontInstructor>;
/** At most this many instructors or plans in a Storefront list. */
export const MAX_STOREFRONT_LIST = 500;
export const StorefrontInstructorList = t.Object({
  instructors: t.Array(StorefrontInstructor, { maxItems: MAX_STOREFRONT_LIST }),
});
export type StorefrontInstructorList = Static<typeof StorefrontInstructorList>;

export const StorefrontPlan = t.Object(
  {
    id: IdOut(),
    name: t.String({ maxLength: 200 }),
    description: Nullable(t.String({ maxLength: 2000 })),
    type: t.Union([t.Literal('membership'), t.Literal('class_pack'), t.Literal('drop_in')]),
    config: PlanConfig,
  },
  { additionalProperties: false },
);
export type StorefrontPlan = Static<typeof StorefrontPlan>;
export const StorefrontPlanList = t.Object({ plans: t.Array(StorefrontPlan, { maxItems: MAX_STOREFRONT_LIST }) });
export type StorefrontPlanList = Static<typeof StorefrontPlanList>;

const link = t.Optional(Nullable(t.String({ maxLength: MAX_URL_LENGTH, description: 'Profile URL or handle' })));
/** The studio's profiles elsewhere: a closed set of networks, each a URL or handle. */
export const SiteSocial = t.Object(
  {
    instagram: link,
    facebook: link,
    youtube: link,
    tiktok: link,
    x: link,
    linkedin: link,
    website: link,
  },
  { additionalProperties: false },
);
export type SiteSocial = Static<typeof SiteSocial>;
export const StorefrontSite = t.Object(
  {
    title: t.String({ maxLength: 200 }),
    tagline: Nullable(t.String({ maxLength: 300 })),
    description: Nullable(t.String({ maxLength: 5000 })),
    logoUrl: Nullable(t.String({ maxLength: MAX_URL_LENGTH })),
    heroImageUrl: Nullable(t.String({ maxLength: MAX_URL_LENGTH })),
    contactEmail: Nullable(t.String({ maxLength: 254 })),
    phone: Nullable(t.String({ maxLength: 50 })),
    address: t.Union([Address, t.Null()]),
    social: t.Union([SiteSocial, t.Null()]),
    publishedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type StorefrontSite = Static<typeof StorefrontSite>;

const policy = Nullable(t.String({ maxLength: 20000 }));
export const StorefrontPolicies = t.Object(
  {
    cancellation: policy,
    lateCancelMinutes: t.Integer({
      minimum: 0,
      description: 'Cancelling closer than this to the start counts as late; 0 for a new studio',
    }),
    noShow: policy,
    terms: policy,
    privacy: policy,
    waiver: policy,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type StorefrontPolicies = Static<typeof StorefrontPolicies>;

export const StorefrontConfig = t.Object(
  {
    studio: t.Object(
      { id: IdOut(), name: t.String({ maxLength: 120 }), slug: t.String({ maxLength: 63 }) },
      { additionalProperties: false },
    ),
    timezone: t.String({ maxLength: 64, description: 'IANA time zone' }),
    currency: t.String({ pattern: '^[A-Z]{3}$', maxLength: 3 }),
    locale: t.String({ maxLength: 35, description: 'BCP 47 language tag, e.g. de-DE' }),
    enabledModes: t.Array(Mode, { maxItems: 4 }),
    branding: t.Object(
      {
        primaryColor: Nullable(t.String({ maxLength: 32, description: 'CSS color, e.g. #6B4FA0' })),
        logoUrl: Nullable(t.String({ maxLength: MAX_URL_LENGTH })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type StorefrontConfig = Static<typeof StorefrontConfig>;
