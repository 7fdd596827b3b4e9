import { AppError, type Config, readBody } from '@studio/shared';
import type { DashboardDeps } from './deps';
import { chromeOf, messagePage, redirect } from './html';
import { csrfMatches, csrfOfSession, loadSession, type Session, sameOrigin } from './signin/session';

const MAX_FORM_BYTES = 64 * 1024;

/** A page's handler: the request and its URL (Elysia's context reduced to what the pages read). */
export type Handler = (req: Request, url: URL) => Promise<Response> | Response;
/** A signed-in page's handler; `form` is null on GET. */
export type SessionHandler = (
  req: Request,
  url: URL,
  s: Session,
  form: FormData | null,
) => Promise<Response> | Response;

/** An HTML form's fields, read bounded whatever its framing, or the page that says why not. */
export async function readForm(req: Request, config: Config): Promise<FormData | Response> {
  const type = req.headers.get('content-type') ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data'))
    return messagePage(415, 'Unsupported form', 'This page accepts only HTML form submissions.');
  // read bounded whatever its framing: a chunked body has no length to check first (signed out too, at /login)
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await readBody(req, MAX_FORM_BYTES, config.REQUEST_BODY_TIMEOUT_MS);
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'request_timeout'))
      return messagePage(413, 'Form too large', 'That form was too large.');
    // what is left of the form is never read: the connection closes with the answer
    const res = messagePage(408, 'Form too slow', 'That form took too long to arrive. Go back and try again.');
    res.headers.set('connection', 'close');
    return res;
  }
  try {
    return await new Response(bytes, { headers: { 'content-type': type } }).formData();
  } catch {
    return messagePage(400, 'Unreadable form', 'That form could not be read. Go back and try again.');
  }
}

/**
 * Pages that need a session: none without one, and every POST checks Origin and the CSRF token. A form carries its
 * mode's token (test mode's is bound to the sandbox), so a form drawn in the other mode, before another tab switched,
 * changes nothing: the answer says the mode changed. `anyMode` forms (the switch itself, sign-out) take either.
 */
export function sessionGuard(deps: DashboardDeps) {
  const { sql, config } = deps;
  return (h: SessionHandler, o: { anyMode?: boolean } = {}): Handler =>
    async (req, url) => {
      const s = await loadSession(sql, config, req);
      if (!s) return redirect('/sign-in');
      if (req.method !== 'POST') return h(req, url, s, null);
      const form = await readForm(req, config);
      if (form instanceof Response) return form;
      const sent = form.get('csrf');
      const ours = sameOrigin(config, req) && csrfOfSession(s, sent);
      if (ours && (o.anyMode || csrfMatches(s, sent))) return h(req, url, s, form);
      if (ours) return modeChanged(config, s);
      return messagePage(
        403,
        'Form expired',
        'This form is out of date or did not come from this site. Reload the page and try again.',
        chromeOf(config, s, 'keys'),
      );
    };
}

/** A form drawn in another mode (or for another sandbox) than the session's now: nothing is done. */
const modeChanged = (config: Config, s: Session) =>
  messagePage(
    409,
    'Mode changed',
    s.sandbox
      ? `This form was drawn before the dashboard switched to test mode (sandbox ${s.sandbox.name}), in another tab or window. Nothing was changed. Reload the page to act on what it shows now.`
      : 'This form was drawn in test mode, and the dashboard has since switched to live mode in another tab or window. Nothing was changed. Reload the page to act on what it shows now.',
    chromeOf(config, s, 'keys'),
  );
export type Guard = ReturnType<typeof sessionGuard>;
