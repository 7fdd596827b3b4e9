import { type FieldError, problems } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import {
  COUPON_CONFIGS,
  type Coupon,
  type CouponConfig,
  type CreateCouponBody,
  isCurrency,
  schemaErrors,
} from '@studio/shared/schemas';
import { event, unchanged, type Written } from '../kit/events';
import { futureInstant } from '../kit/instants';
import * as q from './queries';

/** `{ kind: "percent", percentOff }` or `{ kind: "amount", amountOffCents, currency }`; else 422 `invalid_coupon_config`. */
export function checkCouponConfig(config: unknown): CouponConfig {
  const kind = (config as { kind?: unknown } | null)?.kind;
  let errors: FieldError[];
  if (kind === 'percent' || kind === 'amount') {
    errors = schemaErrors(COUPON_CONFIGS[kind], config, '/body/config');
    const currency = (config as { currency?: unknown }).currency;
    if (!errors.length && kind === 'amount' && !isCurrency(currency as string)) {
      errors.push({ path: '/body/config/currency', message: 'is not an ISO 4217 currency' });
    }
  } else if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    errors = [{ path: '/body/config', message: 'must be an object with a kind' }];
  } else {
    errors = [{ path: '/body/config/kind', message: 'must be "percent" or "amount"' }];
  }
  if (errors.length) {
    throw problems.invalidFields(errors, 'invalid_coupon_config', 'The coupon config is not valid');
  }
  return config as CouponConfig;
}

export async function createCoupon(
  tx: Tx,
  studioId: string,
  body: CreateCouponBody,
): Promise<Written<Coupon, 'coupon.created'>> {
  const config = checkCouponConfig(body.config);
  const expiresAt =
    body.expiresAt == null ? null : futureInstant(body.expiresAt, '/body/expiresAt', 'validation_failed');
  const coupon = await q.insertCoupon(tx, studioId, {
    code: body.code.toUpperCase(),
    config,
    maxRedemptions: body.maxRedemptions ?? null,
    expiresAt,
  });
  return { record: coupon, events: [event('coupon.created', coupon)] };
}

/** Archiving an archived coupon changes nothing and records nothing. */
export async function archiveCoupon(tx: Tx, studioId: string, id: string): Promise<Written<Coupon, 'coupon.archived'>> {
  const before = await q.lockCoupon(tx, studioId, id);
  if (!before) throw problems.notFound('coupon', id);
  if (before.status === 'archived') return unchanged(before);
  const coupon = (await q.archiveCoupon(tx, studioId, id))!;
  return { record: coupon, events: [event('coupon.archived', coupon)] };
}
