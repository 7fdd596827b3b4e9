import type { Static, TObject } from '@sinclair/typebox';
import { iso } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import { Address, SiteSocial, type StorefrontSite } from '@studio/shared/schemas';

interface Row {
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

/** The documented fields of a stored JSON object: a site published before `address` and `social` were closed may hold others. */
const closed = <T extends TObject>(schema: T, v: Record<string, unknown> | null) =>
  (v &&
    Object.fromEntries(
      Object.keys(schema.properties)
        .filter((k) => typeof v[k] === 'string' || v[k] === null)
        .map((k) => [k, v[k]]),
    )) as Static<T> | null;

const toSite = (r: Row): StorefrontSite => ({
  title: r.title,
  tagline: r.tagline,
  description: r.description,
  logoUrl: r.logoUrl,
  heroImageUrl: r.heroImageUrl,
  contactEmail: r.contactEmail,
  phone: r.phone,
  address: closed(Address, r.address),
  social: closed(SiteSocial, r.social),
  publishedAt: iso(r.publishedAt),
});

/** The studio's site, only once published. */
export async function publishedSite(sql: Sql, studioId: string): Promise<StorefrontSite | null> {
  const [row] = await sql<Row[]>`
    select title, tagline, description, logo_url, hero_image_url, contact_email, phone, address, social, published_at
    from sites where studio_id = ${studioId} and published_at is not null`;
  return row ? toSite(row) : null;
}
