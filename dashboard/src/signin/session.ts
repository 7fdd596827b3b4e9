import { timingSafeEqual } from 'node:crypto';
import type { Config } from '@studio/shared';
import { encodeBase62, randomBase62 } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import type { Session } from './queries';
import * as q from './queries';

export const SESSION_TTL_MS = 12 * 3600_000;

export type { Session } from './queries';

const sha256 = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex');

/** `__Host-` pins the cookie to this origin, but browsers accept it only over https. */
export function cookieName(config: Config) {
  return isHttps(config) ? '__Host-dashboard_session' : 'dashboard_session';
}
export const isHttps = (config: Config) => config.DASHBOARD_PUBLIC_URL.startsWith('https:');

export function sessionCookie(config: Config, value: string, maxAgeS: number) {
  const parts = [`${cookieName(config)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeS}`];
  if (isHttps(config)) parts.push('Secure');
  return parts.join('; ');
}

export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * A session cookie's value: 22 random base62 characters, then 21 of an HMAC of them under DASHBOARD_SECRET. A value
 * this gateway did not make is refused before the database is asked: a random cookie on every request (the
 * dashboard has no key to limit) costs a hash, not a query on the pool the API's key lookups use.
 */
const sessionMac = (config: Config, random: string) =>
  encodeBase62(
    BigInt(
      `0x${new Bun.CryptoHasher('sha256', config.DASHBOARD_SECRET).update(`session\n${random}`).digest('hex').slice(0, 30)}`,
    ),
    21,
  );
const SESSION_RANDOM = 22;

function signedByUs(config: Config, value: string): boolean {
  const mac = Buffer.from(sessionMac(config, value.slice(0, SESSION_RANDOM)));
  const sent = Buffer.from(value.slice(SESSION_RANDOM));
  return mac.length === sent.length && timingSafeEqual(mac, sent);
}

/** A new session for one studio; returns the cookie value (shown to the browser only). */
export async function createSession(sql: Sql, config: Config, studioId: string) {
  const random = randomBase62(SESSION_RANDOM);
  const value = random + sessionMac(config, random);
  await q.deleteExpiredSessions(sql);
  await q.insertSession(sql, {
    id: sha256(value),
    studioId,
    csrfToken: randomBase62(32),
    expiresAt: new Date(Date.now() + SESSION_TTL_MS),
  });
  return value;
}

export async function loadSession(sql: Sql, config: Config, req: Request): Promise<Session | null> {
  const value = readCookie(req, cookieName(config));
  if (!value || !/^[0-9A-Za-z]{43}$/.test(value) || !signedByUs(config, value)) return null;
  return (await q.liveSession(sql, sha256(value))) ?? null;
}

export async function deleteSession(sql: Sql, session: Session) {
  await q.deleteSession(sql, session);
}

/** Constant-time comparison of the form's token with the session's. */
export function csrfMatches(session: Session, sent: unknown): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Refuses a POST that a browser says came from another site, even before the
 * CSRF token is looked at (this also covers the sign-in form, which has no
 * session yet). Sec-Fetch-Site first: with `Referrer-Policy: no-referrer`
 * browsers send `Origin: null` on our own forms, so Origin is only a fallback.
 */
export function sameOrigin(config: Config, req: Request): boolean {
  const site = req.headers.get('sec-fetch-site');
  if (site) return site === 'same-origin';
  const origin = req.headers.get('origin');
  if (!origin || origin === 'null') return true;
  return origin === new URL(config.DASHBOARD_PUBLIC_URL).origin || origin === new URL(req.url).origin;
}
