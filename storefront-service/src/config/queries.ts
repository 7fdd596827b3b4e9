import type { Sql } from '@studio/shared/io';
import type { StorefrontConfig } from '@studio/shared/schemas';

interface Row {
  id: string;
  name: string;
  slug: string;
  timezone: string;
  currency: string;
  locale: string;
  enabledModes: StorefrontConfig['enabledModes'];
  primaryColor: string | null;
  logoUrl: string | null;
}

const toConfig = (r: Row): StorefrontConfig => ({
  studio: { id: r.id, name: r.name, slug: r.slug },
  timezone: r.timezone,
  currency: r.currency,
  locale: r.locale,
  enabledModes: r.enabledModes,
  branding: { primaryColor: r.primaryColor, logoUrl: r.logoUrl },
});

/** The configuration of a live studio; null once it is deleted. */
export async function studioConfig(sql: Sql, studioId: string): Promise<StorefrontConfig | null> {
  const [row] = await sql<Row[]>`
    select id, name, slug, timezone, currency, locale, enabled_modes, primary_color, logo_url
    from studios where id = ${studioId} and deleted_at is null`;
  return row ? toConfig(row) : null;
}
