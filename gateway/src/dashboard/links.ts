import type { Config } from '@studio/shared';
import type { Sql } from '@studio/shared/db';
import { randomBase62 } from '@studio/shared/base62';

export const LOGIN_LINK_TTL_MS = 15 * 60_000;

export const signLinkId = (secret: string, linkId: string) =>
  new Bun.CryptoHasher('sha256', secret).update(`login-link:${linkId}`).digest('base64url');

/** A single-use, signed sign-in link for one studio's dashboard, valid 15 minutes. */
export async function createLoginLink(sql: Sql, config: Config, studioId: string) {
  const id = randomBase62(24);
  const expiresAt = new Date(Date.now() + LOGIN_LINK_TTL_MS);
  await sql`insert into login_links ${sql({ id, studioId, expiresAt })}`;
  const token = `${id}.${signLinkId(config.DASHBOARD_SECRET, id)}`;
  return { url: `${config.DASHBOARD_PUBLIC_URL}/login?token=${token}`, expiresAt: expiresAt.toISOString() };
}
