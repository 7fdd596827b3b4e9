import { Type as t } from '@sinclair/typebox';
import { evictKeysOfStudios } from '@studio/management-service/sandboxes';
import { AppError, iso, isoOrNull, newId } from '@studio/shared';
import type { Broadcasts, Db, Sql, Tx } from '@studio/shared/io';
import {
  EMAIL_MAX,
  Email,
  emailForm,
  HttpUrl,
  MAX_URL_LENGTH,
  Nullable,
  SiteSocial,
  StorefrontSite,
  schemaErrors,
} from '@studio/shared/schemas';

export const MODES = ['broadcast', 'two_way', 'community', 'coaching'] as const;

export interface StudioInput {
  name: string;
  slug?: string;
  timezone?: string;
  currency?: string;
  adminEmail?: string;
  modes?: string[];
}

const slugify = (s: string) =>
  s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63) || 'studio';

function validTimezone(tz: string) {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** A studio's input, checked before any I/O: what `insertStudio` writes. */
export interface CheckedStudio {
  name: string;
  slug: string;
  timezone: string;
  currency: string;
  modes: string[];
  adminEmail: string;
}

/** The input checks of `createStudio`: an AppError `validation_failed`, or the values to insert. */
export function checkStudio(input: StudioInput): CheckedStudio {
  const name = input.name?.trim();
  if (!name) throw new AppError('validation_failed', { detail: '--name is required' });
  const timezone = input.timezone ?? 'UTC';
  if (!validTimezone(timezone)) throw new AppError('validation_failed', { detail: `unknown timezone ${timezone}` });
  const modes = input.modes ?? [...MODES];
  const badMode = modes.find((m) => !(MODES as readonly string[]).includes(m));
  if (badMode)
    throw new AppError('validation_failed', { detail: `unknown mode ${badMode}; modes are ${MODES.join(', ')}` });
  const slug = input.slug ?? `${slugify(name)}-${crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36)}`;
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(slug))
    throw new AppError('validation_failed', { detail: `invalid slug ${slug}` });
  // stored as the API stores a member's address, and one the API can answer with
  const adminEmail = emailForm(input.adminEmail ?? `owner@${slug}.test`);
  if (schemaErrors(Email(), adminEmail, '/adminEmail').length)
    throw new AppError('validation_failed', {
      detail: `--admin-email must be an e-mail address (something@domain) of at most ${EMAIL_MAX} characters`,
    });
  return { name, slug, timezone, currency: input.currency ?? 'USD', modes, adminEmail };
}

/** A checked studio and its first admin member, inside the caller's transaction. */
export async function insertStudio(tx: Tx, { name, slug, timezone, currency, modes, adminEmail }: CheckedStudio) {
  const taken = await tx`select 1 from studios where slug = ${slug}`;
  if (taken.length) throw new AppError('validation_failed', { detail: `slug ${slug} is taken` });
  const [studio] = await tx<
    {
      id: string;
      name: string;
      slug: string;
      timezone: string;
      currency: string;
      locale: string;
      enabledModes: string[];
      createdAt: Date;
    }[]
  >`
    insert into studios ${tx({ id: newId('studio'), name, slug, timezone, currency, enabledModes: modes })}
    returning id, name, slug, timezone, currency, locale, enabled_modes, created_at`;
  const [admin] = await tx<{ id: string; email: string; role: string; status: string }[]>`
    insert into members ${tx({ id: newId('member'), studioId: studio!.id, email: adminEmail, role: 'admin', status: 'active', invitedAt: new Date() })}
    returning id, email, role, status`;
  return { studio: { ...studio!, createdAt: iso(studio!.createdAt) }, admin: admin! };
}

/** A studio and its first admin member, in one transaction. */
export async function createStudio(sql: Sql, input: StudioInput) {
  const checked = checkStudio(input);
  return sql.begin((tx) => insertStudio(tx, checked));
}

/**
 * Soft-delete, its sandboxes with it (docs/design/test-mode.md): its keys and their test keys then answer 403
 * `studio_required` on every gateway at once.
 */
export async function deleteStudio(sql: Sql, bus: Broadcasts, studioId: string) {
  const rows = await sql<{ id: string; name: string; deletedAt: Date; liveStudioId: string | null }[]>`
    update studios set deleted_at = coalesce(deleted_at, now()), updated_at = now()
    where id = ${studioId} or live_studio_id = ${studioId}
    returning id, name, deleted_at, live_studio_id`;
  const row = rows.find((r) => r.id === studioId);
  if (!row) throw new AppError('not_found', { detail: `no studio ${studioId}` });
  // every gateway dropped the studio's keys and its sandboxes' from its memory, as it confirmed (false: not every one did in time)
  const propagated = await evictKeysOfStudios(
    sql,
    bus,
    rows.map((r) => r.id),
  );
  return {
    id: row.id,
    name: row.name,
    deletedAt: isoOrNull(row.deletedAt),
    sandboxesDeleted: rows.filter((r) => r.id !== studioId).map((r) => r.id),
    propagated,
  };
}

export async function requireStudio(sql: Db, studioId: string) {
  const [row] = await sql`select id from studios where id = ${studioId} and deleted_at is null`;
  if (!row) throw new AppError('not_found', { detail: `no studio ${studioId}` });
}

const SITE_FIELDS = [
  'title',
  'tagline',
  'description',
  'logoUrl',
  'heroImageUrl',
  'contactEmail',
  'phone',
  'address',
  'social',
] as const;

/** A site's logo and hero image: the API's one rule for a URL shown on public pages. */
const IMAGE_URL = HttpUrl();

/** A profile link: an http(s) URL or a handle (no scheme at all): a website renders it as a link, so never `javascript:`. */
const SocialLink = t.Optional(
  Nullable(
    t.String({
      maxLength: MAX_URL_LENGTH,
      pattern: '^(?:[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+|[^\\s:]+)$',
      'x-pattern-hint': 'an http:// or https:// URL, or a handle such as @lotus',
    }),
  ),
);

/**
 * What site:publish accepts: every field within the bounds `/v1/site` documents for it (StorefrontSite), the contact
 * address an e-mail address, and the links on the page http(s) or handles. Stored beyond them, the answer would
 * break the promise its schema makes.
 */
const SiteDocument = t.Object(
  {
    title: t.String({ minLength: 1, maxLength: 200 }),
    tagline: t.Optional(StorefrontSite.properties.tagline),
    description: t.Optional(StorefrontSite.properties.description),
    logoUrl: t.Optional(StorefrontSite.properties.logoUrl),
    heroImageUrl: t.Optional(StorefrontSite.properties.heroImageUrl),
    contactEmail: t.Optional(Nullable(Email())),
    phone: t.Optional(StorefrontSite.properties.phone),
    address: t.Optional(StorefrontSite.properties.address),
    social: t.Optional(
      Nullable(
        t.Object(Object.fromEntries(Object.keys(SiteSocial.properties).map((k) => [k, SocialLink])), {
          additionalProperties: false,
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

/** Publish (or republish) a studio's public site from a JSON document (on its own, or inside the caller's transaction). */
export async function publishSite(sql: Db, studioId: string, doc: Record<string, unknown>) {
  await requireStudio(sql, studioId);
  const unknown = Object.keys(doc).filter((k) => !(SITE_FIELDS as readonly string[]).includes(k));
  if (unknown.length)
    throw new AppError('validation_failed', {
      detail: `unknown site field ${unknown.join(', ')}; fields are ${SITE_FIELDS.join(', ')}`,
    });
  if (typeof doc.title !== 'string' || !doc.title.trim())
    throw new AppError('validation_failed', { detail: 'site title is required' });
  // shown as images on public pages: http(s) only, never javascript: or data:
  for (const field of ['logoUrl', 'heroImageUrl'] as const) {
    if (doc[field] != null && schemaErrors(IMAGE_URL, doc[field], `/${field}`).length)
      throw new AppError('validation_failed', {
        detail: `site ${field} must be an http:// or https:// URL of at most ${MAX_URL_LENGTH} characters`,
      });
  }
  // every field within what the Storefront documents; address and social are closed shapes (docs/design/hostile-callers.md)
  const errors = schemaErrors(SiteDocument, doc, '');
  if (errors.length)
    throw new AppError('validation_failed', {
      detail: `site ${errors
        .slice(0, 5)
        .map((e) => `${e.path} ${e.message}`)
        .join('; ')}`,
    });
  const row: Record<string, unknown> = { studioId };
  for (const f of SITE_FIELDS) row[f] = doc[f] ?? null;
  const [site] = await sql`
    insert into sites ${sql({ ...row, publishedAt: new Date(), updatedAt: new Date() } as never)}
    on conflict (studio_id) do update set
      title = excluded.title, tagline = excluded.tagline, description = excluded.description, logo_url = excluded.logo_url,
      hero_image_url = excluded.hero_image_url, contact_email = excluded.contact_email, phone = excluded.phone,
      address = excluded.address, social = excluded.social, published_at = excluded.published_at, updated_at = excluded.updated_at
    returning *`;
  return { ...site!, publishedAt: isoOrNull(site!.publishedAt), updatedAt: iso(site!.updatedAt) };
}
