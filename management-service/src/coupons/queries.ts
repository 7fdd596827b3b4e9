import { iso, isoOrNull, newId } from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { Coupon, CouponConfig } from '@studio/shared/schemas';
import { afterSql, type Page, type PageParams, pageOf, sortKeySql } from '../kit/pagination';

interface Row {
  id: string;
  code: string;
  config: CouponConfig;
  maxRedemptions: number | null;
  expiresAt: Date | null;
  status: 'active' | 'archived';
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
const COLUMNS = 'id, code, config, max_redemptions, expires_at, status, archived_at, created_at, updated_at';

const toCoupon = (r: Row): Coupon => ({
  id: r.id,
  code: r.code,
  config: r.config,
  maxRedemptions: r.maxRedemptions,
  expiresAt: isoOrNull(r.expiresAt),
  status: r.status,
  archivedAt: isoOrNull(r.archivedAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** One page of the studio's coupons, archived ones included, keyset on (created_at, id) over `coupons_studio`. */
export async function listCouponsPage(db: Db, studioId: string, p: PageParams): Promise<Page<Coupon>> {
  const rows = await db<(Row & { sortKey: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${sortKeySql(db, 'created_at')} as sort_key from coupons
    where studio_id = ${studioId} ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
  return pageOf(p, rows, toCoupon);
}

/** A coupon of the studio, archived or not (its status says which); null for another studio's id. */
export async function getCoupon(db: Db, studioId: string, id: string): Promise<Coupon | null> {
  const [row] = await db<Row[]>`select ${db.unsafe(COLUMNS)} from coupons where studio_id = ${studioId} and id = ${id}`;
  return row ? toCoupon(row) : null;
}

/** A coupon of the studio, locked for the rest of the transaction. */
export async function lockCoupon(db: Db, studioId: string, id: string): Promise<Coupon | null> {
  const [row] = await db<
    Row[]
  >`select ${db.unsafe(COLUMNS)} from coupons where studio_id = ${studioId} and id = ${id} for update`;
  return row ? toCoupon(row) : null;
}

/** The partial unique index `coupons_active_code` turns a taken code into 409 `coupon_code_taken`, race or not. */
export async function insertCoupon(
  db: Db,
  studioId: string,
  v: { code: string; config: CouponConfig; maxRedemptions: number | null; expiresAt: Date | null },
): Promise<Coupon> {
  const [row] = await db<Row[]>`
    insert into coupons ${db({ id: newId('coupon'), studioId, ...v, config: db.json(v.config) })}
    returning ${db.unsafe(COLUMNS)}`;
  return toCoupon(row!);
}

/** Archiving an archived coupon changes nothing. */
export async function archiveCoupon(db: Db, studioId: string, id: string): Promise<Coupon | null> {
  const [row] = await db<Row[]>`
    update coupons set status = 'archived', archived_at = coalesce(archived_at, now()),
      updated_at = case when status = 'archived' then updated_at else now() end
    where studio_id = ${studioId} and id = ${id} returning ${db.unsafe(COLUMNS)}`;
  return row ? toCoupon(row) : null;
}
