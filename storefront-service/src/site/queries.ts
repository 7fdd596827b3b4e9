import type { Sql } from '@studio/shared/db';

export interface SiteRow {
  title: string;
  tagline: string | null;
  description: string | null;
  logoUrl: string | null;
  heroImageUrl: string | null;
  contactEmail: string | null;
  phone: string | null;
  address: Record<string, unknown> | null;
  social: Record<string, unknown> | null;
  publishedAt: Date;
}

/** The studio's site, only once published. */
export async function publishedSite(sql: Sql, studioId: string): Promise<SiteRow | null> {
  const [row] = await sql<SiteRow[]>`
    select title, tagline, description, logo_url, hero_image_url, contact_email, phone, address, social, published_at
    from sites where studio_id = ${studioId} and published_at is not null`;
  return row ?? null;
}
