import { type Static, Type as t } from '@sinclair/typebox';
import { CurrencyCode, IdOut, MAX_MINOR_UNITS, Nullable, Page, Text, Timestamp } from './fields';

const priceCents = t.Integer({ minimum: 0, maximum: MAX_MINOR_UNITS, description: 'Integer minor units' });

/** Config per plan type (docs/design/resources.md); a missing, extra or out-of-range field is 422 `invalid_plan_config`. */
export const MembershipConfig = t.Object(
  {
    priceCents,
    currency: CurrencyCode,
    interval: t.Union([t.Literal('week'), t.Literal('month'), t.Literal('year')]),
    intervalCount: t.Optional(t.Integer({ minimum: 1, maximum: 12, default: 1 })),
    classesPerInterval: t.Optional(
      Nullable(t.Integer({ minimum: 1, maximum: 10000, description: 'null (default): unlimited' })),
    ),
  },
  { additionalProperties: false, title: 'MembershipConfig' },
);
export const ClassPackConfig = t.Object(
  {
    priceCents,
    currency: CurrencyCode,
    classCount: t.Integer({ minimum: 1, maximum: 1000 }),
    validityDays: t.Integer({ minimum: 1, maximum: 3650 }),
  },
  { additionalProperties: false, title: 'ClassPackConfig' },
);
export const DropInConfig = t.Object(
  { priceCents, currency: CurrencyCode },
  { additionalProperties: false, title: 'DropInConfig' },
);

export const PLAN_CONFIGS = {
  membership: MembershipConfig,
  class_pack: ClassPackConfig,
  drop_in: DropInConfig,
} as const;
export type PlanType = keyof typeof PLAN_CONFIGS;
export const PlanTypeSchema = t.Union([t.Literal('membership'), t.Literal('class_pack'), t.Literal('drop_in')]);
export const PlanConfig = t.Union([MembershipConfig, ClassPackConfig, DropInConfig]);
export type PlanConfig = Static<typeof PlanConfig>;

const visibility = t.Union([t.Literal('public'), t.Literal('private')]);

export const Plan = t.Object({
  id: IdOut('pln_…'),
  name: t.String({ maxLength: 200 }),
  type: PlanTypeSchema,
  config: PlanConfig,
  description: Nullable(t.String({ maxLength: 2000 })),
  visibility,
  status: t.Union([t.Literal('active'), t.Literal('archived')]),
  archivedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Plan = Static<typeof Plan>;
export const PlanPage = Page(Plan);

const name = Text(200, { minLength: 1 });
const description = Nullable(Text(2000));
// Checked against the plan's type by the service, so a bad config is `invalid_plan_config`, not `validation_failed`;
// documented (`x-doc`) as the union it must be, so a generated client types it.
const config = t.Unknown({ 'x-doc': PlanConfig });

export const CreatePlanBody = t.Object(
  {
    name,
    type: PlanTypeSchema,
    config,
    description: t.Optional(description),
    visibility: t.Optional(visibility),
  },
  { additionalProperties: false },
);
export type CreatePlanBody = Static<typeof CreatePlanBody>;

/** `type` cannot change: it is not a field of the PATCH body. */
export const UpdatePlanBody = t.Object(
  {
    name: t.Optional(name),
    config: t.Optional(config),
    description: t.Optional(description),
    visibility: t.Optional(visibility),
  },
  { additionalProperties: false },
);
export type UpdatePlanBody = Static<typeof UpdatePlanBody>;
