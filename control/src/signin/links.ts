import { timingSafeEqual } from 'node:crypto';
import type { Config } from '@studio/shared';
import { AppError, randomBase62 } from '@studio/shared';
import type { Sql } from '@studio/shared/io';

export const LOGIN_LINK_TTL_MS = 15 * 60_000;

export const signLinkId = (secret: string, linkId: string) =>
  new Bun.CryptoHasher('sha256', secret).update(`login-link:${linkId}`).digest('base64url');

/**
 * A single-use, signed sign-in link for one studio's dashboard, valid 15 minutes. Only a live studio's: its
 * sandboxes are reached through its dashboard's test mode (docs/design/test-mode.md).
 */
export async function createLoginLink(sql: Sql, config: Config, studioId: string) {
  const [sandbox] = await sql<{ liveStudioId: string }[]>`
    select live_studio_id from studios where id = ${studioId} and live_studio_id is not null`;
  if (sandbox)
    throw new AppError('validation_failed', {
      detail: `${studioId} is a sandbox: sign in to its live studio (${sandbox.liveStudioId}) and switch to test mode`,
    });
  const id = randomBase62(24);
  const expiresAt = new Date(Date.now() + LOGIN_LINK_TTL_MS);
  await sql`insert into login_links ${sql({ id, studioId, expiresAt })}`;
  const token = `${id}.${signLinkId(config.DASHBOARD_SECRET, id)}`;
  return { url: `${config.DASHBOARD_PUBLIC_URL}/login?token=${token}`, expiresAt: expiresAt.toISOString() };
}

export type LinkCheck =
  | { ok: true; linkId: string; studioId: string; studioName: string }
  | { ok: false; reason: 'invalid' | 'used' | 'expired' };

/** The link's id if its signature is right (checked in constant time), else null. */
export function verifyLinkToken(secret: string, token: unknown): string | null {
  if (typeof token !== 'string' || token.length > 200) return null;
  const [id, mac, extra] = token.split('.');
  if (!id || !mac || extra !== undefined || !/^[0-9A-Za-z]{24}$/.test(id)) return null;
  const want = Buffer.from(signLinkId(secret, id));
  const got = Buffer.from(mac);
  return want.length === got.length && timingSafeEqual(want, got) ? id : null;
}

/** Looks a link up without using it (the page that asks the person to continue). */
export async function checkLoginLink(sql: Sql, config: Config, token: unknown): Promise<LinkCheck> {
  const id = verifyLinkToken(config.DASHBOARD_SECRET, token);
  if (!id) return { ok: false, reason: 'invalid' };
  const [row] = await sql<{ studioId: string; studioName: string; used: boolean; expired: boolean }[]>`
    select l.studio_id, s.name as studio_name, l.used_at is not null as used, l.expires_at <= now() as expired
    from login_links l join studios s on s.id = l.studio_id and s.deleted_at is null
    where l.id = ${id}`;
  if (!row) return { ok: false, reason: 'invalid' };
  if (row.used) return { ok: false, reason: 'used' };
  if (row.expired) return { ok: false, reason: 'expired' };
  return { ok: true, linkId: id, studioId: row.studioId, studioName: row.studioName };
}

/** Uses a link: one atomic update, so two concurrent sign-ins with the same link cannot both succeed. */
export async function consumeLoginLink(sql: Sql, config: Config, token: unknown): Promise<LinkCheck> {
  const id = verifyLinkToken(config.DASHBOARD_SECRET, token);
  if (!id) return { ok: false, reason: 'invalid' };
  const [row] = await sql<{ studioId: string }[]>`
    update login_links set used_at = now()
    where id = ${id} and used_at is null and expires_at > now()
      and studio_id in (select id from studios where deleted_at is null)
    returning studio_id`;
  if (row) return { ok: true, linkId: id, studioId: row.studioId, studioName: '' };
  const why = await checkLoginLink(sql, config, token);
  return why.ok ? { ok: false, reason: 'invalid' } : why;
}
