import { timingSafeEqual } from 'node:crypto';
import { ensureDefaultSandbox } from '@studio/management-service/sandboxes';
import type { Config } from '@studio/shared';
import { encodeBase62, randomBase62 } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import * as q from './queries';

export const SESSION_TTL_MS = 12 * 3600_000;

/**
 * A signed-in session as the pages use it. It belongs to a live studio; in test mode (docs/design/dashboard.md) its
 * pages show and change one of that studio's sandboxes instead, a studio of its own, so `studioId` is the one every
 * page reads and writes, and `liveStudioId` the one the session signed in to.
 */
export interface Session {
  /** SHA-256 of the cookie value; the cookie itself is never stored. */
  id: string;
  /** The studio the pages show and change: the live studio, or in test mode its sandbox. */
  studioId: string;
  /** The studio the session signed in to; a sandbox is reached only as one of its own. */
  liveStudioId: string;
  /** The live studio's name. */
  studioName: string;
  /** IANA zone of the studio, for local times beside UTC. */
  studioTimezone: string;
  /**
   * The token of this mode's forms: the session's own in live mode, bound to the sandbox in test mode, so a form
   * drawn in the other mode (another tab switched meanwhile) changes nothing.
   */
  csrfToken: string;
  /** The session's own token, which the token of each mode's forms begins with. */
  sessionCsrf: string;
  /** In test mode, the sandbox the pages show; null in live mode. */
  sandbox: { id: string; name: string } | null;
}

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
  let row = await q.liveSession(sql, sha256(value));
  if (row?.testMode && !row.sandboxId) {
    // test mode with no live sandbox (its sandboxes deleted meanwhile, by the CLI): the default again
    const { sandbox } = await ensureDefaultSandbox(sql, row.studioId);
    row = { ...row, sandboxId: sandbox.id, sandboxName: sandbox.name };
  }
  return row ? sessionOf(row) : null;
}

function sessionOf(row: q.SessionRow): Session {
  const sandbox = row.testMode && row.sandboxId ? { id: row.sandboxId, name: row.sandboxName! } : null;
  return {
    id: row.id,
    studioId: sandbox?.id ?? row.studioId,
    liveStudioId: row.studioId,
    studioName: row.studioName,
    studioTimezone: row.studioTimezone,
    csrfToken: sandbox ? `${row.csrfToken}.${sandbox.id}` : row.csrfToken,
    sessionCsrf: row.csrfToken,
    sandbox,
  };
}

/**
 * Live or test mode for a session's pages from now on; `sandboxId` picks one of its studio's sandboxes (false when
 * it is not one of them: nothing changed).
 */
export const setMode = (sql: Sql, session: Session, testMode: boolean, sandboxId: string | null = null) =>
  q.setSessionMode(sql, { id: session.id, studioId: session.liveStudioId }, testMode, sandboxId);

export async function deleteSession(sql: Sql, session: Session) {
  await q.deleteSession(sql, { id: session.id, studioId: session.liveStudioId });
}

const sameText = (sent: string, want: string) => {
  const a = Buffer.from(sent);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** Constant-time comparison of the form's token with the token of the session's mode. */
export function csrfMatches(session: Session, sent: unknown): boolean {
  return typeof sent === 'string' && sameText(sent, session.csrfToken);
}

/**
 * Whether a form's token is this session's, drawn in any mode: the session's own token, or it bound to a sandbox
 * (the form was drawn before a switch, or is the switch itself).
 */
export function csrfOfSession(session: Session, sent: unknown): boolean {
  if (typeof sent !== 'string') return false;
  const own = session.sessionCsrf;
  return sameText(sent.slice(0, own.length), own) && (sent.length === own.length || sent[own.length] === '.');
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
