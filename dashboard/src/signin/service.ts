import { timingSafeEqual } from 'node:crypto';
import { checkLoginLink, consumeLoginLink, type LinkCheck } from '@studio/control';
import { randomBase62 } from '@studio/shared';
import type { DashboardDeps } from '../deps';
import { html, layout, messagePage, page, redirect } from '../html';
import {
  createSession,
  deleteSession,
  isHttps,
  readCookie,
  SESSION_TTL_MS,
  type Session,
  sessionCookie,
} from './session';

/**
 * Sign-in with a single-use link. GET only shows a "Continue" button; the link is
 * used by the POST, so a mail scanner that prefetches links cannot burn it, and
 * the cookie is set by a same-site request (a SameSite=Strict cookie set at the end
 * of a cross-site navigation would not be sent on the redirect that follows).
 */

const HOW_TO = html`<p>Sign-in links are made for one studio at a time. Ask your studio's operator to run</p>
  <pre><code>bun run admin login-link --studio &lt;your studio id&gt;</code></pre>
  <p>and open the link it prints. A link works <strong>once</strong>, within <strong>15 minutes</strong>; your session then lasts 12 hours.</p>`;

export function signInPage(notice?: string): Response {
  const body = html`<section class="card narrow">
    <h1>Sign in to Developer settings</h1>
    ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
    ${HOW_TO}
  </section>`;
  return page(layout({ title: 'Sign in' }, body));
}

const REFUSED: Record<Exclude<LinkCheck, { ok: true }>['reason'], string> = {
  invalid: 'This sign-in link is not valid. Check that you copied all of it.',
  used: 'This sign-in link has already been used. Each link works once: ask for a new one.',
  expired: 'This sign-in link has expired (links last 15 minutes). Ask for a new one.',
};

function refused(reason: keyof typeof REFUSED): Response {
  const body = html`<section class="card narrow">
    <h1>Sign-in link refused</h1>
    <p class="error" role="alert">${REFUSED[reason]}</p>
    ${HOW_TO}
  </section>`;
  return page(layout({ title: 'Sign-in link refused' }, body), reason === 'invalid' ? 400 : 410);
}

/**
 * The link page's proof that the sign-in form was drawn by this browser: a random value in a cookie (SameSite=Strict,
 * HttpOnly, for /login only) and in the form. Another site cannot read the one or send the other, so it cannot sign a
 * visitor into a studio of its own choosing with a link it holds (login CSRF): the site check alone lets a request
 * through when a browser sends neither Sec-Fetch-Site nor an Origin to judge by.
 */
const LOGIN_COOKIE = 'dashboard_login';
const loginCookie = (deps: DashboardDeps, value: string, maxAgeS: number) =>
  [`${LOGIN_COOKIE}=${value}`, 'Path=/login', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeS}`]
    .concat(isHttps(deps.config) ? ['Secure'] : [])
    .join('; ');

/** The link page's proof, spent: the answer to its form takes the cookie back, whatever the answer. */
function cleared(deps: DashboardDeps, res: Response): Response {
  res.headers.append('set-cookie', loginCookie(deps, '', 0));
  return res;
}

function drawnHere(req: Request, form: FormData): boolean {
  const cookie = readCookie(req, LOGIN_COOKIE);
  const field = form.get('nonce');
  if (!cookie || typeof field !== 'string') return false;
  // compared as bytes, whose lengths must match (a non-ASCII character is longer in bytes than in characters)
  const [a, b] = [Buffer.from(cookie), Buffer.from(field)];
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function loginLinkPage(deps: DashboardDeps, url: URL): Promise<Response> {
  const token = url.searchParams.get('token');
  const check = await checkLoginLink(deps.sql, deps.config, token);
  if (!check.ok) return refused(check.reason);
  const nonce = randomBase62(32);
  const body = html`<section class="card narrow">
    <h1>Sign in to ${check.studioName}</h1>
    <p>You are about to open the Developer settings of <strong>${check.studioName}</strong>: its API keys and activity log.</p>
    <form method="post" action="/login">
      <input type="hidden" name="token" value="${token}">
      <input type="hidden" name="nonce" value="${nonce}">
      <button type="submit" class="btn btn-primary">Continue</button>
    </form>
  </section>`;
  const res = page(layout({ title: 'Sign in' }, body));
  res.headers.append('set-cookie', loginCookie(deps, nonce, 15 * 60));
  return res;
}

export async function useLoginLink(deps: DashboardDeps, req: Request, form: FormData): Promise<Response> {
  // a link that is not valid, used or expired says so first; a valid one is used only from its own page
  const valid = await checkLoginLink(deps.sql, deps.config, form.get('token'));
  if (!valid.ok) return cleared(deps, refused(valid.reason));
  if (!drawnHere(req, form))
    return messagePage(
      403,
      'Form expired',
      'This sign-in form did not come from its link page in this browser. Open the sign-in link again.',
    );
  const check = await consumeLoginLink(deps.sql, deps.config, form.get('token'));
  if (!check.ok) return cleared(deps, refused(check.reason));
  const value = await createSession(deps.sql, deps.config, check.studioId);
  return cleared(deps, redirect('/keys', { 'set-cookie': sessionCookie(deps.config, value, SESSION_TTL_MS / 1000) }));
}

export async function signOut(deps: DashboardDeps, session: Session): Promise<Response> {
  await deleteSession(deps.sql, session);
  return redirect('/sign-in?signed-out=1', { 'set-cookie': sessionCookie(deps.config, '', 0) });
}
