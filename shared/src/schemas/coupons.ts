import { type Static, Type as t } from '@sinclair/typebox';
import { CurrencyCode, IdOut, Instant, MAX_MINOR_UNITS, Nullable, Page, Timestamp } from './fields';

export const PercentCouponConfig = t.Object(
  {
    kind: t.Literal('percent'),
    percentOff: t.Integer({ minimum: 1, maximum: 100 }),
  },
  { additionalProperties: false, title: 'PercentCouponConfig' },
);
export const AmountCouponConfig = t.Object(
  {
    kind: t.Literal('amount'),
    amountOffCents: t.Integer({ minimum: 1, maximum: MAX_MINOR_UNITS }),
    currency: CurrencyCode,
  },
  { additionalProperties: false, title: 'AmountCouponConfig' },
);
export const COUPON_CONFIGS = { percent: PercentCouponConfig, amount: AmountCouponConfig } as const;
export const CouponConfig = t.Union([PercentCouponConfig, AmountCouponConfig]);
export type CouponConfig = Static<typeof CouponConfig>;

export const Coupon = t.Object({
  id: IdOut('cpn_…'),
  code: t.String({ maxLength: 32, description: "Upper-case; unique among the studio's active coupons" }),
  config: CouponConfig,
  maxRedemptions: Nullable(t.Integer()),
  expiresAt: Nullable(Timestamp),
  status: t.Union([t.Literal('active'), t.Literal('archived')]),
  archivedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Coupon = Static<typeof Coupon>;
export const CouponPage = Page(Coupon);

export const CreateCouponBody = t.Object(
  {
    code: t.String({
      pattern: '^[A-Za-z0-9_-]{3,32}$',
      maxLength: 32,
      description: '3..32 of A-Z 0-9 _ -; stored upper-case',
    }),
    // Checked by the service, so a bad config is `invalid_coupon_config`, not `validation_failed`; documented
    // (`x-doc`) as the union it must be, so a generated client types it.
    config: t.Unknown({ 'x-doc': CouponConfig }),
    maxRedemptions: t.Optional(Nullable(t.Integer({ minimum: 1, maximum: MAX_MINOR_UNITS }))),
    expiresAt: t.Optional(
      Nullable(
        t.String({ ...Instant, description: 'RFC 3339 date-time with an offset, in the future; null for never' }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateCouponBody = Static<typeof CreateCouponBody>;
