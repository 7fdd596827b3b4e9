import type { DashboardDeps } from './deps';
import { html, layout, page, redirect } from './html';
import { checkLoginLink, consumeLoginLink, type LinkCheck } from './links';
import { createSession, deleteSession, SESSION_TTL_MS, type Session, sessionCookie } from './session';

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

export async function loginLinkPage(deps: DashboardDeps, url: URL): Promise<Response> {
  const token = url.searchParams.get('token');
  const check = await checkLoginLink(deps.sql, deps.config, token);
  if (!check.ok) return refused(check.reason);
  const body = html`<section class="card narrow">
    <h1>Sign in to ${check.studioName}</h1>
    <p>You are about to open the Developer settings of <strong>${check.studioName}</strong>: its API keys and activity log.</p>
    <form method="post" action="/login">
      <input type="hidden" name="token" value="${token}">
      <button type="submit" class="btn btn-primary">Continue</button>
    </form>
  </section>`;
  return page(layout({ title: 'Sign in' }, body));
}

export async function useLoginLink(deps: DashboardDeps, form: FormData): Promise<Response> {
  const check = await consumeLoginLink(deps.sql, deps.config, form.get('token'));
  if (!check.ok) return refused(check.reason);
  const value = await createSession(deps.sql, check.studioId);
  return redirect('/keys', { 'set-cookie': sessionCookie(deps.config, value, SESSION_TTL_MS / 1000) });
}

export async function signOut(deps: DashboardDeps, session: Session): Promise<Response> {
  await deleteSession(deps.sql, session);
  return redirect('/sign-in?signed-out=1', { 'set-cookie': sessionCookie(deps.config, '', 0) });
}
