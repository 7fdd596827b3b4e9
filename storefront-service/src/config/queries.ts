import type { Sql } from '@studio/shared/db';

export interface StudioRow {
  id: string;
  name: string;
  slug: string;
  timezone: string;
  currency: string;
  locale: string;
  enabledModes: string[];
  primaryColor: string | null;
  logoUrl: string | null;
}

export async function liveStudio(sql: Sql, studioId: string): Promise<StudioRow | null> {
  const [row] = await sql<StudioRow[]>`
    select id, name, slug, timezone, currency, locale, enabled_modes, primary_color, logo_url
    from studios where id = ${studioId} and deleted_at is null`;
  return row ?? null;
}
