import { type ApiKeyJson, createApiKey, listApiKeys, revokeApiKey, revokedKeyName, studioKey } from '@studio/control';
import { AppError, isScope, type KeyKind, parseOriginList, scopesOfMode } from '@studio/shared';
import type { DashboardDeps } from '../deps';
import { chromeOf, type Html, html, layout, messagePage, page, redirect, timeTag } from '../html';
import { onceField, onceId } from '../once';
import type { Session } from '../signin/session';
import { scopeSummary } from './scopes';

/** The Keys page: list, create (the full key shown once, on the POST's own response), revoke with confirmation. */

/** The scopes a key made on this page may hold: a test key's (test mode, a sandbox's) include `sandbox:write`. */
const scopesOf = (s: Session) => scopesOfMode(s.sandbox ? 'test' : 'live');
const resourcesOf = (scopes: readonly string[]) => [...new Set(scopes.map((sc) => sc.split(':')[0]!))];

interface CreateForm {
  kind: KeyKind;
  name: string;
  scopes: string[];
  /** '', or one of EXPIRIES. */
  expires: string;
  /** One origin per line (publishable keys). */
  origins: string;
}

export interface KeysView {
  reveal?: { key: string; record: ApiKeyJson };
  notice?: string | Html;
  error?: { kind: KeyKind; message: string; form: CreateForm };
  /** Hide revoked and expired keys. */
  hideInactive?: boolean;
}

/** Lifetimes offered at creation. */
export const EXPIRIES: Record<string, { label: string; ms: number }> = {
  '1h': { label: '1 hour', ms: 3_600_000 },
  '24h': { label: '24 hours', ms: 86_400_000 },
  '7d': { label: '7 days', ms: 7 * 86_400_000 },
  '30d': { label: '30 days', ms: 30 * 86_400_000 },
  '90d': { label: '90 days', ms: 90 * 86_400_000 },
};

export const chrome = (deps: DashboardDeps, s: Session) => chromeOf(deps.config, s, 'keys');
const dateIn = (s: Session) => (iso: string | null, empty?: string) =>
  timeTag(iso ? new Date(iso) : null, empty, s.studioTimezone);
const expired = (k: ApiKeyJson) => k.expiresAt !== null && Date.parse(k.expiresAt) <= Date.now();

function access(k: ApiKeyJson): Html {
  if (k.kind === 'publishable') {
    const origins = k.allowedOrigins;
    return html`<span class="muted">Storefront, read-only</span>${
      origins
        ? html`<details class="more"><summary>${origins.length === 1 ? origins[0] : `${origins.length} websites`}</summary><ul class="plain">${origins.map((o) => html`<li><code>${o}</code></li>`)}</ul></details>`
        : html`<br><span class="muted small">any website</span>`
    }`;
  }
  const summary = scopeSummary(k.scopes);
  if (k.scopes.length <= 2 || summary === 'all') return html`<span class="scopes-summary">${summary}</span>`;
  return html`<details class="more"><summary class="scopes-summary">${summary}</summary><ul class="plain">${k.scopes.map((sc) => html`<li><code>${sc}</code></li>`)}</ul></details>`;
}

function status(k: ApiKeyJson, date: ReturnType<typeof dateIn>): Html {
  if (k.revokedAt) return html`<span class="status off">Revoked</span> ${date(k.revokedAt)}`;
  if (expired(k)) return html`<span class="status off">Expired</span> ${date(k.expiresAt)}`;
  if (k.expiresAt) return html`<span class="status warn">Expires</span> ${date(k.expiresAt)}`;
  return html`<span class="status ok">Active</span>`;
}

/** `rolled`: it has a live replacement already, so no second Roll (one replacement per key). */
function actions(k: ApiKeyJson, csrf: string, rolled: boolean): Html {
  if (k.revokedAt || expired(k)) return html``;
  return html`<div class="actions-row">${rolled ? '' : html`<a href="/keys/${k.id}/roll" class="btn btn-quiet">Roll</a>`}
    <a href="/keys/${k.id}/rename" class="btn btn-quiet">Rename</a>
    ${k.kind === 'publishable' ? html`<a href="/keys/${k.id}/origins" class="btn btn-quiet">Websites</a>` : ''}
    <form method="post" action="/keys/${k.id}/revoke" data-confirm="Revoke “${k.name}”? Every call made with it will be refused from now on. This cannot be undone.">
      <input type="hidden" name="csrf" value="${csrf}">
      <button type="submit" class="btn btn-danger">Revoke</button>
    </form></div>`;
}

/** Which key a roll made from which, by id: after a roll two rows share a name, and this tells them apart. */
interface Lineage {
  byId: Map<string, ApiKeyJson>;
  /** The id of the key that replaced it, by replaced key id. */
  replacedBy: Map<string, string>;
}

function lineageOf(keys: ApiKeyJson[]): Lineage {
  const byId = new Map(keys.map((k) => [k.id, k]));
  const replacedBy = new Map<string, string>();
  for (const k of keys) if (k.rolledFrom) replacedBy.set(k.rolledFrom, k.id);
  return { byId, replacedBy };
}

function lineageNote(k: ApiKeyJson, l: Lineage): Html {
  const next = l.byId.get(l.replacedBy.get(k.id) ?? '');
  const previous = k.rolledFrom ? l.byId.get(k.rolledFrom) : undefined;
  return html`${next ? html`<br><span class="lineage muted small">Rolled → replaced by <code>${next.hint}</code></span>` : ''}${
    previous ? html`<br><span class="lineage muted small">Replaces <code>${previous.hint}</code> (rolled)</span>` : ''
  }`;
}

function hasLiveReplacement(k: ApiKeyJson, l: Lineage): boolean {
  const next = l.byId.get(l.replacedBy.get(k.id) ?? '');
  return next !== undefined && !next.revokedAt;
}

function keyRow(k: ApiKeyJson, s: Session, lineage: Lineage): Html {
  const date = dateIn(s);
  return html`<tr class="${k.revokedAt || expired(k) ? 'revoked' : ''}" data-key-id="${k.id}">
    <td data-label="Name"><strong class="name">${k.name}</strong>${lineageNote(k, lineage)}</td>
    <td data-label="Kind"><span class="badge badge-${k.kind}">${k.kind}</span></td>
    <td data-label="Key"><code>${k.hint}</code></td>
    <td data-label="Access" class="access">${access(k)}</td>
    <td data-label="Created">${date(k.createdAt)}</td>
    <td data-label="Last used">${date(k.lastUsedAt, 'Never')}</td>
    <td data-label="Status">${status(k, date)}</td>
    <td class="actions">${actions(k, s.csrfToken, hasLiveReplacement(k, lineage))}</td>
  </tr>`;
}

function revealPanel(r: NonNullable<KeysView['reveal']>): Html {
  return html`<section class="card reveal" aria-labelledby="reveal-title">
    <h2 id="reveal-title">Your new ${r.record.mode === 'test' ? 'test ' : ''}${r.record.kind} key “${r.record.name}”</h2>
    <p class="warning"><strong>Copy it now: it will not be shown again.</strong> We keep only a fingerprint of it. If you lose it, revoke it and create another.</p>
    <div class="secret-row">
      <code id="new-key" class="secret">${r.key}</code>
      <button type="button" class="btn btn-primary" data-copy="#new-key" hidden>Copy</button>
    </div>
    <p class="muted small" role="status" data-copy-status></p>
    <p class="small">${
      r.record.kind === 'secret'
        ? html`Send it from your server as <code>Authorization: Bearer …</code> to the Management API. Never put it in a browser or an app.`
        : html`Use it in your website's code as <code>Authorization: Bearer …</code> for the Storefront API.`
    }${r.record.mode === 'test' ? ' A test key calls the same API at the same addresses, and sees and changes only its sandbox.' : ''}</p>
  </section>`;
}

function scopeGrid(scopes: readonly string[], chosen: Set<string>): Html {
  const offered = new Set(scopes);
  const box = (scope: string, label: string) =>
    offered.has(scope) &&
    html`<label class="check"><input type="checkbox" name="scope" value="${scope}" data-scope="${scope.split(':')[1]}" ${chosen.has(scope) ? html`checked` : ''}> <span class="sr-label">${label}</span></label>`;
  return html`<table class="scopes">
    <thead><tr><th scope="col">Resource</th><th scope="col">Read</th><th scope="col">Write</th></tr></thead>
    <tbody>
      <tr class="all"><th scope="row">all</th>
        <td><label class="check"><input type="checkbox" name="all" value="read" data-scope-all="read" ${chosen.has('all:read') ? html`checked` : ''}> <span>read-all</span></label></td>
        <td><label class="check"><input type="checkbox" name="all" value="write" data-scope-all="write" ${chosen.has('all:write') ? html`checked` : ''}> <span>write-all</span></label></td></tr>
      ${resourcesOf(scopes).map((r) => html`<tr><th scope="row">${r}</th><td>${box(`${r}:read`, `${r}:read`)}</td><td>${box(`${r}:write`, `${r}:write`)}</td></tr>`)}
    </tbody>
  </table>`;
}

function expirySelect(chosen: string): Html {
  return html`<label class="field">Expires <select name="expires">
    <option value="" ${chosen ? '' : html`selected`}>Never</option>
    ${Object.entries(EXPIRIES).map(([v, e]) => html`<option value="${v}" ${v === chosen ? html`selected` : ''}>after ${e.label}</option>`)}
  </select></label>`;
}

function createForms(deps: DashboardDeps, s: Session, error?: KeysView['error']): Html {
  const csrf = s.csrfToken;
  // each form names the id of the key it makes, so sending it twice cannot make two (once.ts)
  const once = () => onceField(deps.config.DASHBOARD_SECRET, s.id, 'key');
  // the error sits at its form, is announced, and its form's first field takes the focus (scrolled into view)
  const err = (kind: KeyKind) =>
    error?.kind === kind ? html`<p class="error" role="alert" id="form-error" tabindex="-1">${error.message}</p>` : '';
  const name = (kind: KeyKind) => (error?.kind === kind ? error.form.name : '');
  const focus = (kind: KeyKind) => (error?.kind === kind ? html`autofocus aria-describedby="form-error"` : '');
  const expires = (kind: KeyKind) => (error?.kind === kind ? error.form.expires : '');
  return html`<section class="create" aria-labelledby="create-title">
    <h2 id="create-title">Create a key</h2>
    <div class="create-grid">
      <form method="post" action="/keys" class="card">
        <h3>Secret key</h3>
        <p class="muted small">For your servers and back-office tools (Management API). Choose what it may do.</p>
        ${err('secret')}
        <input type="hidden" name="csrf" value="${csrf}">
        <input type="hidden" name="once" value="${once()}">
        <input type="hidden" name="kind" value="secret">
        <label class="field">Name <input name="name" required maxlength="100" placeholder="e.g. booking-sync" value="${name('secret')}" ${focus('secret')}></label>
        ${expirySelect(expires('secret'))}
        <fieldset><legend>Scopes</legend>${scopeGrid(scopesOf(s), new Set(error?.kind === 'secret' ? error.form.scopes : []))}${
          s.sandbox
            ? html`<p class="muted small"><code>sandbox:write</code> lets the key reset its sandbox (<code>POST /v1/sandbox/reset</code>), as CI does before its tests; only test keys may hold it.</p>`
            : ''
        }</fieldset>
        <button type="submit" class="btn btn-primary">Create secret key</button>
      </form>
      <form method="post" action="/keys" class="card">
        <h3>Publishable key</h3>
        <p class="muted small">For your website's browser code (Storefront API). It can only read public data, so it is safe to publish.</p>
        ${err('publishable')}
        <input type="hidden" name="csrf" value="${csrf}">
        <input type="hidden" name="once" value="${once()}">
        <input type="hidden" name="kind" value="publishable">
        <label class="field">Name <input name="name" required maxlength="100" placeholder="e.g. website" value="${name('publishable')}" ${focus('publishable')}></label>
        ${expirySelect(expires('publishable'))}
        <label class="field">Websites that may use it <span class="muted small">(one origin per line, e.g. https://lotus.example or https://*.lotus.example; empty: any)</span>
          <textarea name="origins" rows="3" spellcheck="false" placeholder="https://lotus.example">${error?.kind === 'publishable' ? error.form.origins : ''}</textarea></label>
        <button type="submit" class="btn btn-primary">Create publishable key</button>
      </form>
    </div>
  </section>`;
}

/** Test mode's keys: what they are, and that the docs are the same. */
function testKeysNote(deps: DashboardDeps, s: Session, sandbox: string): Html {
  const docs = chrome(deps, s).docs!;
  return html`<p class="test-note">These are sandbox <strong>${sandbox}</strong>'s test keys (<code>svc_sk_test_…</code>, <code>svc_pk_test_…</code>). They call the same Storefront and Management APIs, at the same addresses and as the same <a href="${docs.storefront}" rel="noopener">Storefront docs</a> and <a href="${docs.management}" rel="noopener">Management docs</a> describe, but see and change only this sandbox's test data. A key made here is a test key.</p>`;
}

export async function keysPage(deps: DashboardDeps, s: Session, view: KeysView = {}, status = 200): Promise<Response> {
  const keys = await listApiKeys(deps.sql, s.studioId);
  const live = keys.filter((k) => !k.revokedAt && !expired(k));
  const shown = view.hideInactive ? live : keys;
  const inactive = keys.length - live.length;
  const lineage = lineageOf(keys);
  const body = html`
    ${view.reveal ? revealPanel(view.reveal) : ''}
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">${s.sandbox ? 'Test keys' : 'API keys'}</h1>
      ${s.sandbox ? testKeysNote(deps, s, s.sandbox.name) : ''}
      <p class="muted">${live.length} active of ${keys.length}. “Last used” counts only calls the key was allowed to make, and may lag by a second or two.
        ${
          inactive
            ? view.hideInactive
              ? html`<a href="/keys">Show ${inactive} revoked or expired</a>`
              : html`<a href="/keys?hide=inactive">Hide ${inactive} revoked or expired</a>`
            : ''
        }</p>
      ${
        shown.length
          ? html`<table class="list keys">
            <thead><tr><th>Name</th><th>Kind</th><th>Key</th><th>Access</th><th>Created</th><th>Last used</th><th>Status</th><th><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>${shown.map((k) => keyRow(k, s, lineage))}</tbody>
          </table>`
          : html`<p class="empty card">${keys.length ? 'Every key is revoked or expired.' : 'No keys yet. Create one below.'}</p>`
      }
    </section>
    ${createForms(deps, s, view.error)}`;
  return page(layout({ title: 'API keys', studio: chrome(deps, s) }, body), status);
}

/** Reads the create form; `all=read` / `all=write` stand for every read / write scope (works without JavaScript). */
export function parseCreateForm(form: FormData, scopes: readonly string[]): CreateForm {
  const kind = form.get('kind') === 'publishable' ? 'publishable' : 'secret';
  const offered = scopes;
  const chosen = new Set(form.getAll('scope').map(String));
  for (const all of form.getAll('all').map(String)) {
    if (all === 'read' || all === 'write') {
      for (const sc of offered) if (sc.endsWith(`:${all}`)) chosen.add(sc);
      chosen.add(`all:${all}`);
    }
  }
  const expires = String(form.get('expires') ?? '');
  return {
    kind,
    name: String(form.get('name') ?? ''),
    scopes: [...chosen],
    expires: Object.hasOwn(EXPIRIES, expires) ? expires : '', // not `constructor` or the like
    origins: String(form.get('origins') ?? ''),
  };
}

export async function createKey(deps: DashboardDeps, s: Session, form: FormData): Promise<Response> {
  const input = parseCreateForm(form, scopesOf(s));
  const scopes = input.kind === 'secret' ? input.scopes.filter(isScope) : [];
  const fail = (message: string) => keysPage(deps, s, { error: { kind: input.kind, message, form: input } }, 422);
  if (form.get('kind') !== 'secret' && form.get('kind') !== 'publishable')
    return fail('Choose the kind of key: secret (a server) or publishable (a website).');
  if (!input.name.trim()) return fail('Give the key a name, so you can tell it apart later.');
  if (input.name.trim().length > 100) return fail('The name can be at most 100 characters.');
  // Postgres text cannot hold NUL: a form error, not a 500 (docs/design/hostile-callers.md)
  if (input.name.includes('\u0000')) return fail('The name cannot contain a NUL character.');
  if (input.kind === 'secret' && !scopes.length)
    return fail('Choose at least one scope: a secret key without scopes cannot call anything.');
  const origins = input.kind === 'publishable' ? parseOriginList(input.origins.split(/[\s,]+/)) : { origins: null };
  if ('error' in origins) return fail(origins.error);
  const id = onceId(deps.config.DASHBOARD_SECRET, s.id, 'key', form.get('once'));
  if (id === null) return fail('This form is out of date: create the key again from this page.');
  const expiresAt = input.expires ? new Date(Date.now() + EXPIRIES[input.expires]!.ms) : null;
  try {
    const created = await createApiKey(deps.sql, {
      studioId: s.studioId,
      kind: input.kind,
      name: input.name,
      scopes,
      expiresAt,
      allowedOrigins: origins.origins,
      id,
    });
    return keysPage(deps, s, { reveal: created }, 201);
  } catch (err) {
    if (err instanceof AppError && err.code === 'validation_failed') return fail(err.message);
    if (err instanceof AppError && err.code === 'conflict' && id) return sentTwice(deps, s, id);
    throw err;
  }
}

/** The form was sent again (a reload that re-posts it, a double click): the key its first send made stands, alone. */
async function sentTwice(deps: DashboardDeps, s: Session, id: string): Promise<Response> {
  const made = await studioKey(deps.sql, s.studioId, id);
  const notice = made
    ? html`This form was sent already: it made the key “${made.name}”, in the list below, and no other. Its full text was shown once, on the answer to that first send; if it was not copied, revoke the key and create another.`
    : 'This form was sent already; create the key again from this page.';
  return keysPage(deps, s, { notice }, 409);
}

export async function revokeKey(deps: DashboardDeps, s: Session, keyId: string, form: FormData): Promise<Response> {
  const key = await studioKey(deps.sql, s.studioId, keyId);
  if (!key) return messagePage(404, 'No such key', 'This studio has no key with that id.', chrome(deps, s));
  if (key.revokedAt) return redirect(`/keys?revoked=${encodeURIComponent(keyId)}`);
  if (form.get('confirm') !== 'yes') return confirmPage(deps, s, keyId, key.name);
  await revokeApiKey(deps.sql, deps.bus, keyId, s.studioId);
  return redirect(`/keys?revoked=${encodeURIComponent(keyId)}`);
}

/** Without JavaScript the Revoke button lands here; with it, a confirm dialog sends `confirm=yes` directly. */
function confirmPage(deps: DashboardDeps, s: Session, keyId: string, name: string): Response {
  const body = html`<section class="card narrow">
    <h1>Revoke “${name}”?</h1>
    <p>Every call made with this key will be refused (401) from the moment you confirm, on every server. This cannot be undone: to restore access, create a new key and deploy it.</p>
    <form method="post" action="/keys/${keyId}/revoke" class="row">
      <input type="hidden" name="csrf" value="${s.csrfToken}">
      <input type="hidden" name="confirm" value="yes">
      <button type="submit" class="btn btn-danger">Revoke key</button>
      <a href="/keys" class="btn btn-quiet">Cancel</a>
    </form>
  </section>`;
  return page(layout({ title: 'Revoke key', studio: chrome(deps, s) }, body));
}

export async function revokedNotice(
  deps: DashboardDeps,
  s: Session,
  keyId: string | null,
): Promise<string | undefined> {
  if (!keyId) return undefined;
  const name = await revokedKeyName(deps.sql, s.studioId, keyId);
  return name !== null ? `Key “${name}” is revoked. Calls made with it are now refused.` : undefined;
}
