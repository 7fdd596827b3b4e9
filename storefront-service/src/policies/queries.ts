import { iso } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import type { StorefrontPolicies } from '@studio/shared/schemas';

interface Row {
  cancellation: string | null;
  lateCancelMinutes: number | null;
  noShow: string | null;
  terms: string | null;
  privacy: string | null;
  waiver: string | null;
  updatedAt: Date;
}

const toPolicies = (r: Row): StorefrontPolicies => ({
  cancellation: r.cancellation,
  lateCancelMinutes: r.lateCancelMinutes ?? 0,
  noShow: r.noShow,
  terms: r.terms,
  privacy: r.privacy,
  waiver: r.waiver,
  updatedAt: iso(r.updatedAt),
});

/** The studio's policies; a studio that never wrote any gets the defaults, dated at its creation. Null once it is deleted. */
export async function studioPolicies(sql: Sql, studioId: string): Promise<StorefrontPolicies | null> {
  const [row] = await sql<Row[]>`
    select p.cancellation, p.late_cancel_minutes, p.no_show, p.terms, p.privacy, p.waiver,
           coalesce(p.updated_at, s.created_at) as updated_at
    from studios s left join policies p on p.studio_id = s.id
    where s.id = ${studioId} and s.deleted_at is null`;
  return row ? toPolicies(row) : null;
}
