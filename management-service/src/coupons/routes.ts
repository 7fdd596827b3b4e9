import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { Coupon, CouponPage, CreateCouponBody } from '@studio/shared/schemas/coupons';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { listPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listCoupons } from './queries';
import * as svc from './service';

const params = t.Object({ couponId: t.String({ maxLength: 64 }) });

/** Coupons (contract §8): codes unique among active coupons; DELETE archives (and frees the code). */
export const couponRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-coupons' })
    .use(withCaller)
    .get(pathOf('managementListCoupons'), async ({ caller }) => listPage(await listCoupons(deps.sql, caller.studioId)),
      mgRoute('managementListCoupons', 'List coupons', { 200: CouponPage }, {}, 'Active and archived coupons, ordered by createdAt, then id.'))
    .post(pathOf('managementCreateCoupon'), ({ caller, request, body }) =>
      runWrite(deps, caller, request, body, async (tx) => {
        const coupon = await svc.createCoupon(tx, caller.studioId, body);
        return { status: 201, body: coupon, location: `/v1/coupons/${coupon.id}` };
      }), {
      body: CreateCouponBody,
      ...mgRoute('managementCreateCoupon', 'Create a coupon', { 201: Coupon }, { 409: ['coupon_code_taken'], 422: ['invalid_coupon_config'] },
        '`code` is stored upper-case and must not be the code of another active coupon of the studio (case-insensitive); an archived coupon\'s code can be reused. `expiresAt`, when set, is in the future.'),
    })
    .delete(pathOf('managementArchiveCoupon'), ({ caller, request, params: { couponId } }) =>
      runWrite(deps, caller, request, undefined, async (tx) => ({ status: 200, body: await svc.archiveCoupon(tx, caller.studioId, couponId) })), {
      params,
      ...mgRoute('managementArchiveCoupon', 'Archive a coupon', { 200: Coupon }, { 404: ['not_found'] }, 'The coupon becomes `archived` (it stays listed); the answer is the coupon in its final state.'),
    });
