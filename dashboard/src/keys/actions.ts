import { type LiveKey, liveKey, renameApiKey, replacementOf, rollApiKey, setKeyOrigins } from '@studio/control';
import { AppError, parseOriginList } from '@studio/shared';
import type { DashboardDeps } from '../deps';
import { type Html, html, layout, messagePage, page, redirect, timeTag } from '../html';
import type { Session } from '../signin/session';
import { chrome, keysPage } from './service';

/** Roll, rename and websites of one key: a page each (they work without JavaScript), POST-redirect-GET. */

/** When the old key stops, for a roll. */
export const ROLL_GRACE: Record<string, { label: string; ms: number }> = {
  now: { label: 'now', ms: 0 },
  '1h': { label: 'in 1 hour', ms: 3_600_000 },
  '24h': { label: 'in 24 hours', ms: 86_400_000 },
  '7d': { label: 'in 7 days', ms: 7 * 86_400_000 },
};

const liveKeyOf = (deps: DashboardDeps, s: Session, keyId: string) => liveKey(deps.sql, s.studioId, keyId);

function actionPage(deps: DashboardDeps, s: Session, title: string, body: Html, status = 200): Response {
  return page(layout({ title, studio: chrome(deps, s) }, html`<section class="card narrow">${body}</section>`), status);
}

const hidden = (s: Session) => html`<input type="hidden" name="csrf" value="${s.csrfToken}">`;
const errorLine = (error?: string) =>
  error ? html`<p class="error" role="alert" id="form-error" tabindex="-1">${error}</p>` : '';

function rollForm(deps: DashboardDeps, s: Session, key: LiveKey, error?: string, status = 200): Response {
  return actionPage(
    deps,
    s,
    'Roll key',
    html`<h1>Roll “${key.name}”</h1>${errorLine(error)}
    <p>Rolling makes a new ${key.kind} key with the same name, ${key.kind === 'secret' ? 'scopes' : 'websites'} and studio, shown once. The old key keeps working until the time you choose, so you can deploy the new one first.</p>
    <form method="post" action="/keys/${key.id}/roll" class="stack" data-roll>
      ${hidden(s)}
      <fieldset><legend>The old key stops working</legend>
        ${Object.entries(ROLL_GRACE).map(([v, g]) => html`<label class="check"><input type="radio" name="grace" value="${v}" ${v === '24h' ? html`checked` : ''}> ${g.label}</label>`)}
      </fieldset>
      <div class="row"><button type="submit" class="btn btn-primary">Roll key</button> <a href="/keys" class="btn btn-quiet">Cancel</a></div>
    </form>`,
    status,
  );
}

const alreadyRolled = (deps: DashboardDeps, s: Session, which: string) =>
  messagePage(
    409,
    'Already rolled',
    `${which} was already rolled: its replacement is in the list of keys. Roll the replacement, or revoke the old key to end it now.`,
    chrome(deps, s),
  );

export async function rollKey(
  deps: DashboardDeps,
  s: Session,
  keyId: string,
  form: FormData | null,
): Promise<Response> {
  const key = await liveKeyOf(deps, s, keyId);
  // a roll whose old key stopped at once: sent again, the key is no longer live, and it is the roll that was done
  if (!key && form && (await replacementOf(deps.sql, keyId, s.studioId))) return alreadyRolled(deps, s, 'This key');
  if (!key)
    return messagePage(
      404,
      'No such key',
      'This studio has no live key with that id (revoked and expired keys cannot be rolled).',
      chrome(deps, s),
    );
  if (!form) return rollForm(deps, s, key);
  const choice = String(form.get('grace') ?? '');
  const grace = Object.hasOwn(ROLL_GRACE, choice) ? ROLL_GRACE[choice] : undefined; // not `constructor` or the like
  if (!grace) return rollForm(deps, s, key, 'Choose when the old key stops working.', 422);
  let rolled: Awaited<ReturnType<typeof rollApiKey>>;
  try {
    rolled = await rollApiKey(deps.sql, deps.bus, keyId, grace.ms, s.studioId);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'conflict') throw err;
    // sent twice (a reload that re-posts): the first roll stands, with its one replacement
    return alreadyRolled(deps, s, `“${key.name}”`);
  }
  const stops = timeTag(new Date(rolled.previous.expiresAt), undefined, s.studioTimezone);
  return keysPage(
    deps,
    s,
    { reveal: rolled, notice: html`The old “${key.name}” key stops working ${grace.ms ? html`at ${stops}` : 'now'}.` },
    201,
  );
}

export async function renameKey(
  deps: DashboardDeps,
  s: Session,
  keyId: string,
  form: FormData | null,
): Promise<Response> {
  const key = await liveKeyOf(deps, s, keyId);
  if (!key) return messagePage(404, 'No such key', 'This studio has no live key with that id.', chrome(deps, s));
  const name = form ? String(form.get('name') ?? '').trim() : key.name;
  // Postgres text cannot hold NUL: a form error, not a 500 (docs/design/hostile-callers.md)
  const error =
    form && (!name || name.length > 100)
      ? 'The name must be 1 to 100 characters.'
      : form && name.includes('\u0000')
        ? 'The name cannot contain a NUL character.'
        : undefined;
  if (form && !error) {
    await renameApiKey(deps.sql, s.studioId, keyId, name);
    return redirect('/keys');
  }
  return actionPage(
    deps,
    s,
    'Rename key',
    html`<h1>Rename “${key.name}”</h1>
    ${errorLine(error)}
    <form method="post" action="/keys/${key.id}/rename" class="stack">
      ${hidden(s)}
      <label class="field">Name <input name="name" required maxlength="100" value="${name}" ${error ? html`autofocus aria-describedby="form-error"` : ''}></label>
      <div class="row"><button type="submit" class="btn btn-primary">Save</button> <a href="/keys" class="btn btn-quiet">Cancel</a></div>
    </form>`,
    error ? 422 : 200,
  );
}

export async function keyOrigins(
  deps: DashboardDeps,
  s: Session,
  keyId: string,
  form: FormData | null,
): Promise<Response> {
  const key = await liveKeyOf(deps, s, keyId);
  if (key?.kind !== 'publishable')
    return messagePage(404, 'No such key', 'This studio has no live publishable key with that id.', chrome(deps, s));
  const text = form ? String(form.get('origins') ?? '') : (key.allowedOrigins ?? []).join('\n');
  let error: string | undefined;
  if (form) {
    const parsed = parseOriginList(text.split(/[\s,]+/));
    if ('error' in parsed) error = parsed.error;
    else {
      try {
        await setKeyOrigins(deps.sql, deps.bus, keyId, parsed.origins ?? [], s.studioId);
        return redirect('/keys');
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        error = err.message;
      }
    }
  }
  return actionPage(
    deps,
    s,
    'Websites',
    html`<h1>Websites that may use “${key.name}”</h1>
    <p>Browsers name the page that makes each call; a call from any other website is refused (403 <code>origin_not_allowed</code>). Calls from servers name no page and are not restricted. Empty: any website.</p>
    ${errorLine(error)}
    <form method="post" action="/keys/${key.id}/origins" class="stack">
      ${hidden(s)}
      <label class="field">One origin per line <textarea name="origins" rows="5" spellcheck="false" placeholder="https://lotus.example&#10;https://*.lotus.example" ${error ? html`autofocus aria-describedby="form-error"` : ''}>${text}</textarea></label>
      <div class="row"><button type="submit" class="btn btn-primary">Save</button> <a href="/keys" class="btn btn-quiet">Cancel</a></div>
    </form>`,
    error ? 422 : 200,
  );
}
