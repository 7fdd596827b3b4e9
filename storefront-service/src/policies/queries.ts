import type { Sql } from '@studio/shared/db';

export interface PoliciesRow {
  cancellation: string | null;
  lateCancelMinutes: number | null;
  noShow: string | null;
  terms: string | null;
  privacy: string | null;
  waiver: string | null;
  updatedAt: Date;
}

/** The studio's policies; a studio that never wrote any gets the defaults, dated at its creation. */
export async function studioPolicies(sql: Sql, studioId: string): Promise<PoliciesRow | null> {
  const [row] = await sql<PoliciesRow[]>`
    select p.cancellation, p.late_cancel_minutes, p.no_show, p.terms, p.privacy, p.waiver,
           coalesce(p.updated_at, s.created_at) as updated_at
    from studios s left join policies p on p.studio_id = s.id
    where s.id = ${studioId} and s.deleted_at is null`;
  return row ?? null;
}
