import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getCoupon, listCouponsPage } from './queries';
import * as svc from './service';

type Ids = 'managementListCoupons' | 'managementCreateCoupon' | 'managementGetCoupon' | 'managementArchiveCoupon';

/** Coupons (docs/design/resources.md): codes unique among active coupons; DELETE archives (and frees the code). */
export const couponHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListCoupons: ({ caller, query }) =>
      listCouponsPage(deps.sql, caller.studioId, readPage(deps.config.CURSOR_SECRET, caller, 'coupons', query)),
    managementCreateCoupon: (c) => write(c, (tx) => svc.createCoupon(tx, c.caller.studioId, c.body)),
    managementGetCoupon: async ({ caller, params }) =>
      found(await getCoupon(deps.sql, caller.studioId, params.couponId), 'coupon'),
    managementArchiveCoupon: (c) => write(c, (tx) => svc.archiveCoupon(tx, c.caller.studioId, c.params.couponId)),
  } satisfies HandlersFor<Ids>;
};
