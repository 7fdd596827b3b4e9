import { AppError, type Config, readBody } from '@studio/shared';
import type { DashboardDeps } from './deps';
import { chromeOf, messagePage, redirect } from './html';
import { csrfMatches, loadSession, type Session, sameOrigin } from './signin/session';

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

/** Pages that need a session: none without one, and every POST checks Origin and the CSRF token. */
export function sessionGuard(deps: DashboardDeps) {
  const { sql, config } = deps;
  return (h: SessionHandler): Handler =>
    async (req, url) => {
      const s = await loadSession(sql, config, req);
      if (!s) return redirect('/sign-in');
      if (req.method !== 'POST') return h(req, url, s, null);
      const form = await readForm(req, config);
      if (form instanceof Response) return form;
      if (!sameOrigin(config, req) || !csrfMatches(s, form.get('csrf')))
        return messagePage(
          403,
          'Form expired',
          'This form is out of date or did not come from this site. Reload the page and try again.',
          chromeOf(config, s, 'keys'),
        );
      return h(req, url, s, form);
    };
}
export type Guard = ReturnType<typeof sessionGuard>;
