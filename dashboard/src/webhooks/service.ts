import {
  allowsPrivateUrls,
  createEndpoint,
  type DeliveryJson,
  deleteEndpoint,
  type EndpointJson,
  endpointJson,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  MAX_ENDPOINTS_PER_STUDIO,
  ROLL_GRACE_MS,
  replayDelivery,
  rollEndpointSecret,
  secretVersionOf,
  sendTestEvent,
  setEndpointEnabled,
  studioBacklog,
  type WebhookContext,
  webhookContext,
} from '@studio/control';
import { AppError, EVENT_TYPES, iso } from '@studio/shared';
import { MAX_URL_LENGTH } from '@studio/shared/schemas';
import type { DashboardDeps } from '../deps';
import { chromeOf, type Html, html, layout, messagePage, page, redirect, timeTag } from '../html';
import { onceField, onceId } from '../once';
import type { Session } from '../signin/session';

/**
 * The Webhooks page (docs/design/webhooks.md): a studio's endpoints, each with its delivery log. Every action
 * goes through the webhooks module (`shared/src/io/webhooks/`), which the operator CLI uses too; the
 * dispatcher (in management-service) does the sending. The signing secret is shown once, on the
 * POST's own response (create and roll), like a new key. A problem the module refuses with (a URL
 * the SSRF rules refuse, the 16th endpoint, a disabled endpoint's test) is a form error, never a 500.
 */

export const ENDPOINT_ID = '(whe_[0-9A-Za-z]{1,64})';
export const DELIVERY_ID = '(whd_[0-9A-Za-z]{1,64})';
/** What a POST to `/webhooks/{endpointId}/{action}` does; `roll` and its confirmation are also a GET page. */
export const ENDPOINT_ACTIONS = ['test', 'enable', 'disable', 'roll', 'delete'] as const;
export type EndpointAction = (typeof ENDPOINT_ACTIONS)[number];
const DELIVERIES_PER_PAGE = 20;

const chrome = (deps: DashboardDeps, s: Session) => chromeOf(deps.config, s, 'webhooks');
const dateIn = (s: Session) => (iso: string | null, empty?: string) =>
  timeTag(iso ? new Date(iso) : null, empty, s.studioTimezone);
const hidden = (s: Session) => html`<input type="hidden" name="csrf" value="${s.csrfToken}">`;
const grace = `${ROLL_GRACE_MS / 3_600_000} hours`;

/** One context per dashboard (its secret box is built once): the gateway's WEBHOOK_SECRET_KEY and WEBHOOK_ALLOW_PRIVATE_URLS. */
const contexts = new WeakMap<DashboardDeps, WebhookContext>();
function contextOf(deps: DashboardDeps): WebhookContext {
  const known = contexts.get(deps);
  if (known) return known;
  const ctx = webhookContext(deps.sql, deps.config);
  contexts.set(deps, ctx);
  return ctx;
}

/** The module's answer, or the problem it refused with (anything else is a bug and goes on up). */
async function attempt<T>(
  run: () => Promise<T>,
): Promise<{ ok: T; error?: undefined } | { ok?: undefined; error: AppError }> {
  try {
    return { ok: await run() };
  } catch (err) {
    if (err instanceof AppError) return { error: err };
    throw err;
  }
}

const noSuchEndpoint = (deps: DashboardDeps, s: Session) =>
  messagePage(404, 'No such endpoint', 'This studio has no webhook endpoint with that id.', chrome(deps, s));

/** Event types by resource noun, in the order of docs/design/events.md. */
const GROUPS = [...new Set(EVENT_TYPES.map((t) => t.split('.')[0]!))].map((noun) => ({
  noun,
  types: EVENT_TYPES.filter((t) => t.startsWith(`${noun}.`)),
}));

interface CreateForm {
  url: string;
  which: 'all' | 'chosen';
  events: string[];
}

export interface WebhooksView {
  /** The secret, shown this once (after a create or a roll). */
  reveal?: { secret: string; endpoint: EndpointJson; rolled: boolean };
  notice?: string | Html;
  error?: { message: string; form: CreateForm };
}

function endpointStatus(e: EndpointJson, date: ReturnType<typeof dateIn>): Html {
  if (!e.enabled)
    return html`<span class="status off">Disabled</span>${e.disabledReason ? html`<br><span class="muted small">${e.disabledReason}</span>` : ''}`;
  if (e.failingSince)
    return html`<span class="status warn">Failing</span> <span class="small">since ${date(e.failingSince)}</span>`;
  return html`<span class="status ok">Enabled</span>`;
}

function eventList(events: string[] | null): Html {
  if (!events) return html`<span>All event types</span>`;
  const chips = html`<ul class="chips">${events.map((t) => html`<li>${t}</li>`)}</ul>`;
  return events.length <= 4
    ? chips
    : html`<details class="more"><summary>${events.length} event types</summary>${chips}</details>`;
}

function secretNote(e: EndpointJson, date: ReturnType<typeof dateIn>): Html {
  return e.previousSecretExpiresAt
    ? html`<br><span class="muted small">Old secret also signs until ${date(e.previousSecretExpiresAt)}</span>`
    : html``;
}

function endpointRow(e: EndpointJson, s: Session): Html {
  const date = dateIn(s);
  return html`<tr class="${e.enabled ? '' : 'revoked'}" data-endpoint-id="${e.id}">
    <td data-label="URL" class="url"><a href="/webhooks/${e.id}"><code>${e.url}</code></a>${secretNote(e, date)}</td>
    <td data-label="Events">${eventList(e.events)}</td>
    <td data-label="Status">${endpointStatus(e, date)}</td>
    <td data-label="Created">${date(e.createdAt)}</td>
    <td class="actions"><div class="actions-row">
      <a href="/webhooks/${e.id}" class="btn btn-quiet">Delivery log</a>
      ${e.enabled ? html`<form method="post" action="/webhooks/${e.id}/test">${hidden(s)}<button type="submit" class="btn btn-quiet">Send test event</button></form>` : ''}
    </div></td>
  </tr>`;
}

function revealPanel(r: NonNullable<WebhooksView['reveal']>): Html {
  return html`<section class="card reveal" aria-labelledby="reveal-title" data-reveal-return="/webhooks/${r.endpoint.id}">
    <h2 id="reveal-title">${r.rolled ? 'The new signing secret' : 'Signing secret'} of <code class="wrap">${r.endpoint.url}</code></h2>
    <p class="warning"><strong>Copy it now: it will not be shown again.</strong> Your receiver verifies each delivery's <code>webhook-signature</code> with it. If you lose it, roll it.</p>
    <div class="secret-row">
      <code id="new-secret" class="secret">${r.secret}</code>
      <button type="button" class="btn btn-primary" data-copy="#new-secret" hidden>Copy</button>
    </div>
    <p class="muted small" role="status" data-copy-status data-copied="The secret is on your clipboard."></p>
    <p class="small">${
      r.rolled
        ? html`For the next ${grace} every delivery is signed with both the old and the new secret (two signatures in <code>webhook-signature</code>), so deploy the new one to your receiver within that time.`
        : html`Verify deliveries with a <a href="https://www.standardwebhooks.com/" rel="noopener">Standard Webhooks</a> library, e.g. <code>new Webhook(secret).verify(body, headers)</code> from the <code>standardwebhooks</code> npm package.`
    }</p>
  </section>`;
}

/** `occurrence.<wbr>rescheduled`: a narrow screen wraps a type at its dot, never inside a word. */
const typeLabel = (t: string) => {
  const [noun, verb] = t.split('.') as [string, string];
  return html`${noun}.<wbr>${verb}`;
};

function eventPicker(form?: CreateForm): Html {
  const chosen = new Set(form?.events ?? []);
  const which = form?.which ?? 'all';
  return html`<fieldset class="events-choice" data-events-choice><legend>Events to send</legend>
    <label class="check"><input type="radio" name="which" value="all" ${which === 'all' ? html`checked` : ''}> <span>All event types, and any added later</span></label>
    <label class="check"><input type="radio" name="which" value="chosen" data-events-chosen ${which === 'chosen' ? html`checked` : ''}> <span>Only the ones ticked below</span></label>
    <div class="event-groups">${GROUPS.map(
      (g) => html`<div class="event-group" role="group" aria-label="${g.noun} events">
      <strong class="small">${g.noun}</strong>
      ${g.types.map((t) => html`<label class="check"><input type="checkbox" name="event" value="${t}" data-event ${chosen.has(t) ? html`checked` : ''}> <code>${typeLabel(t)}</code></label>`)}
    </div>`,
    )}</div>
  </fieldset>`;
}

/** Where an endpoint may be, as the stack delivers (`allowsPrivateUrls`): said beside the URL field. */
const whereNote = (allowPrivate: boolean) =>
  allowPrivate
    ? html`(http:// and private addresses are allowed here: this stack delivers with <code>WEBHOOK_ALLOW_PRIVATE_URLS</code> on, for local development)`
    : html`(https://, reachable from the internet on port 443 or 8443)`;

function createForm(
  deps: DashboardDeps,
  s: Session,
  count: number,
  allowPrivate: boolean,
  error?: WebhooksView['error'],
): Html {
  const full = count >= MAX_ENDPOINTS_PER_STUDIO;
  return html`<section class="create" aria-labelledby="create-title">
    <h2 id="create-title">Add an endpoint</h2>
    <form method="post" action="/webhooks" class="card stack">
      <p class="muted small">Every change the Management API makes in this studio is sent to the endpoint as a signed <code>POST</code> (Standard Webhooks), retried on a schedule (by default for about 28 hours) until it answers 2xx. It receives events recorded after it is added. At most ${MAX_ENDPOINTS_PER_STUDIO} endpoints${full ? ': delete one to add another' : ''}.</p>
      ${error ? html`<p class="error" role="alert" id="form-error" tabindex="-1">${error.message}</p>` : ''}
      ${hidden(s)}
      <input type="hidden" name="once" value="${onceField(deps.config.DASHBOARD_SECRET, s.id, 'webhookEndpoint')}">
      <label class="field">Endpoint URL <span class="muted small" data-where>${whereNote(allowPrivate)}</span>
        <input name="url" type="url" required maxlength="${MAX_URL_LENGTH}" inputmode="url" spellcheck="false" placeholder="https://hooks.example.com/studio" value="${error?.form.url ?? ''}" ${error ? html`autofocus aria-describedby="form-error"` : ''}></label>
      ${eventPicker(error?.form)}
      <button type="submit" class="btn btn-primary">Add endpoint</button>
    </form>
  </section>`;
}

/**
 * The studio's deliveries waiting to be sent, when there are any; past WEBHOOK_PENDING_BUDGET, counted over the studio
 * and its sandboxes together (its tenant), its new events wait too (docs/design/webhooks.md, "Fairness"), and the page
 * says so, and since when, and what the other studios of its tenant add.
 */
function backlogNote(backlog: Awaited<ReturnType<typeof studioBacklog>>, s: Session, budget: number): Html {
  if (!backlog.pending && !backlog.deferredSince) return html``;
  const counted = (n: number) =>
    n >= budget ? `${budget.toLocaleString('en-US')} or more` : n.toLocaleString('en-US');
  const count = counted(backlog.pending);
  const deliveries = backlog.pending === 1 ? 'delivery is' : 'deliveries are';
  const tenant =
    backlog.tenantPending > backlog.pending
      ? ` (${counted(backlog.tenantPending)} with the live studio and its sandboxes together)`
      : '';
  if (!backlog.deferredSince)
    return html`<p class="muted small" data-backlog>${count} ${deliveries} waiting to be sent or retried${tenant}.</p>`;
  return html`<p class="warning" role="status" data-backlog><strong>New events are waiting</strong> (since ${dateIn(s)(iso(backlog.deferredSince))}): ${count} ${deliveries} waiting to be sent or retried${tenant}, and past ${budget.toLocaleString('en-US')}, counted over a live studio and its sandboxes together, a studio's new events wait for that backlog to drain.
    They are sent in order as your endpoints work through it; none is dropped. An endpoint that answers slowly or fails holds it up: check each one's log.</p>`;
}

export async function webhooksPage(
  deps: DashboardDeps,
  s: Session,
  view: WebhooksView = {},
  status = 200,
): Promise<Response> {
  const budget = deps.config.WEBHOOK_PENDING_BUDGET;
  const [endpoints, backlog, allowPrivate] = await Promise.all([
    listEndpoints(deps.sql, s.studioId),
    studioBacklog(deps.sql, s.studioId, budget),
    allowsPrivateUrls(contextOf(deps)),
  ]);
  const body = html`
    ${view.reveal ? revealPanel(view.reveal) : ''}
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <p class="muted">Endpoints of your servers that hear about every change as it happens: a class cancelled, a member invited, a plan archived.
        Each delivery's log, with the answer your server gave, is one click away.</p>
      ${backlogNote(backlog, s, budget)}
      ${
        endpoints.length
          ? html`<table class="list webhooks">
            <thead><tr><th>URL</th><th>Events</th><th>Status</th><th>Created</th><th><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>${endpoints.map((e) => endpointRow(e, s))}</tbody>
          </table>`
          : html`<p class="empty card">No endpoints yet. Add one below.</p>`
      }
    </section>
    ${createForm(deps, s, endpoints.length, allowPrivate, view.error)}`;
  return page(layout({ title: 'Webhooks', studio: chrome(deps, s) }, body), status);
}

/** The create form as sent; `which=chosen` with the ticked `event`s, else every type. */
export function parseCreateForm(form: FormData): CreateForm {
  const which = form.get('which') === 'chosen' ? 'chosen' : 'all';
  return { url: String(form.get('url') ?? '').trim(), which, events: form.getAll('event').map(String) };
}

export async function createWebhook(deps: DashboardDeps, s: Session, form: FormData): Promise<Response> {
  const input = parseCreateForm(form);
  const fail = (message: string) => webhooksPage(deps, s, { error: { message, form: input } }, 422);
  if (!input.url) return fail('Enter the URL of your endpoint, e.g. https://hooks.example.com/studio.');
  if (input.url.includes('\u0000')) return fail('The URL cannot contain a NUL character.');
  // the URL is stored as the parser writes it, which may be longer (percent-encoding): it must fit too
  if (input.url.length > MAX_URL_LENGTH || (URL.canParse(input.url) && new URL(input.url).href.length > MAX_URL_LENGTH))
    return fail(`The URL can be at most ${MAX_URL_LENGTH} characters.`);
  if (input.which === 'chosen' && !input.events.length)
    return fail('Tick at least one event type, or choose all of them.');
  // the form names the endpoint's id, so sending it twice cannot add two (once.ts)
  const id = onceId(deps.config.DASHBOARD_SECRET, s.id, 'webhookEndpoint', form.get('once'));
  if (id === null) return fail('This form is out of date: add the endpoint again from this page.');
  const created = await attempt(() =>
    createEndpoint(contextOf(deps), {
      studioId: s.studioId,
      url: input.url,
      events: input.which === 'chosen' ? input.events : null,
      id,
    }),
  );
  if (created.error) {
    // sent again (a reload that re-posts it, a double click): the endpoint its first send added stands, alone
    const made = id ? (await attempt(() => getEndpoint(deps.sql, id, s.studioId))).ok : undefined;
    if (made)
      return webhooksPage(
        deps,
        s,
        {
          notice: html`This form was sent already: it added ${made.url}, in the list below, and no other. Its signing secret was shown once, on the answer to that first send; if it was not copied, roll the secret on the endpoint's page.`,
        },
        409,
      );
    return fail(sentence(created.error.message));
  }
  return webhooksPage(deps, s, { reveal: { ...created.ok, rolled: false } }, 201);
}

/** A module's detail as a sentence of the page ("the URL must start with https://" → "The URL must start with https://."). */
const sentence = (text: string) => {
  const t = text.trim();
  // an id keeps its letters as they are (whe_…, not Whe_…)
  const lead = /^[a-z]{2,5}_[0-9A-Za-z]/.test(t) ? t : t.charAt(0).toUpperCase() + t.slice(1);
  return lead + (/[.!?]$/.test(t) ? '' : '.');
};

/** What a redirect after an action says on the endpoint's page (fixed texts: nothing from the query is echoed). */
const DONE: Record<string, string> = {
  test: 'A test event (webhook.test) is on its way. Its attempt appears below within a second or two: reload to see it.',
  replayed: 'The delivery is queued again and will be attempted within a second or two: reload to see the attempt.',
  enabled:
    'The endpoint is enabled: events recorded from now on are delivered. Replay below any delivery that failed while it was off.',
  disabled:
    'The endpoint is disabled: nothing more is sent to it, and its pending deliveries have failed (replay them after enabling it).',
};

interface EndpointView {
  reveal?: WebhooksView['reveal'];
  notice?: string | Html;
  /** A problem an action was refused with. */
  error?: string;
  before?: string | null;
}

function deliveryStatus(d: DeliveryJson, date: ReturnType<typeof dateIn>): Html {
  if (d.inFlight) return html`<span class="status warn">Sending</span>`;
  if (d.status === 'succeeded') return html`<span class="status ok">Delivered</span>`;
  if (d.status === 'failed') return html`<span class="status off">Failed</span>`;
  return html`<span class="status warn">Pending</span>${d.nextAttemptAt ? html` <span class="small">next attempt ${date(d.nextAttemptAt)}</span>` : ''}`;
}

function attemptsList(d: DeliveryJson, date: ReturnType<typeof dateIn>): Html {
  if (!d.attempts.length) return html`<span class="muted">No attempt yet</span>`;
  return html`<ol class="attempts">${d.attempts.map(
    (a) => html`<li>
    <div class="attempt-head">${date(a.at)}
      ${a.statusCode === null ? html`<span class="status off">no answer</span>` : html`<span class="status ${a.statusCode >= 200 && a.statusCode < 300 ? 'ok' : 'off'}">HTTP ${a.statusCode}</span>`}
      <span class="muted small">${a.durationMs} ms</span></div>
    ${a.error ? html`<p class="attempt-error small">${a.error}</p>` : ''}
    ${a.response !== null ? html`<details class="more"><summary class="small">Answer (first 1 KB)</summary><pre class="answer">${a.response || '(empty)'}</pre></details>` : ''}
  </li>`,
  )}</ol>`;
}

function deliveryRow(d: DeliveryJson, s: Session, endpoint: EndpointJson): Html {
  const date = dateIn(s);
  return html`<tr data-delivery-id="${d.id}">
    <td data-label="Event"><code>${d.eventType}</code><br><code class="muted small" title="webhook-id">${d.eventId}</code></td>
    <td data-label="Created">${date(d.createdAt)}</td>
    <td data-label="Status">${deliveryStatus(d, date)}</td>
    <td data-label="Attempts">${attemptsList(d, date)}</td>
    <td class="actions">${
      endpoint.enabled && !d.inFlight
        ? html`<form method="post" action="/webhooks/${endpoint.id}/deliveries/${d.id}/replay">${hidden(s)}<button type="submit" class="btn btn-quiet">Replay</button></form>`
        : ''
    }</td>
  </tr>`;
}

async function endpointPage(
  deps: DashboardDeps,
  s: Session,
  endpointId: string,
  view: EndpointView = {},
  status = 200,
  headers: Record<string, string> = {},
): Promise<Response> {
  const found = await attempt(async () => ({
    endpoint: endpointJson(await getEndpoint(deps.sql, endpointId, s.studioId)),
    log: await listDeliveries(deps.sql, s.studioId, endpointId, {
      limit: DELIVERIES_PER_PAGE,
      before: view.before ?? undefined,
    }),
  }));
  if (found.error) {
    if (found.error.code === 'not_found') return noSuchEndpoint(deps, s);
    throw found.error;
  }
  const { endpoint: e, log } = found.ok;
  const body = html`
    ${view.reveal ? revealPanel(view.reveal) : ''}
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${view.error ? html`<p class="error" role="alert" id="form-error" tabindex="-1">${view.error}</p>` : ''}
    ${endpointCard(e, s)}
    ${deliveryLog(log, e, s, view)}`;
  return page(layout({ title: 'Webhook endpoint', studio: chrome(deps, s) }, body), status, headers);
}

/** The endpoint's facts and its actions (test, enable or disable, roll, delete). */
function endpointCard(e: EndpointJson, s: Session): Html {
  const date = dateIn(s);
  return html`
    <section class="card endpoint" aria-labelledby="endpoint-title">
      <p class="small"><a href="/webhooks">← All endpoints</a></p>
      <h1 id="endpoint-title" class="wrap"><code>${e.url}</code></h1>
      <dl class="facts">
        <dt>Status</dt><dd>${endpointStatus(e, date)}</dd>
        <dt>Events</dt><dd>${eventList(e.events)}</dd>
        <dt>Created</dt><dd>${date(e.createdAt)}</dd>
        <dt>Signing secret</dt><dd>${
          e.previousSecretExpiresAt
            ? html`Rolled: the old secret signs beside the new one until ${date(e.previousSecretExpiresAt)}.`
            : html`Shown once, when the endpoint was added or last rolled.`
        }</dd>
        <dt>Endpoint id</dt><dd><code>${e.id}</code></dd>
      </dl>
      <div class="row endpoint-actions">
        ${e.enabled ? html`<form method="post" action="/webhooks/${e.id}/test">${hidden(s)}<button type="submit" class="btn btn-primary">Send test event</button></form>` : ''}
        <form method="post" action="/webhooks/${e.id}/${e.enabled ? 'disable' : 'enable'}">${hidden(s)}<button type="submit" class="btn btn-quiet">${e.enabled ? 'Disable' : 'Enable'}</button></form>
        <a href="/webhooks/${e.id}/roll" class="btn btn-quiet">Roll secret</a>
        <form method="post" action="/webhooks/${e.id}/delete" data-confirm="Delete the endpoint ${e.url}? Nothing more is sent to it, and its delivery log is deleted with it. This cannot be undone.">
          ${hidden(s)}<button type="submit" class="btn btn-danger">Delete</button></form>
      </div>
    </section>`;
}

/** The endpoint's delivery log, newest first, with its pager. */
function deliveryLog(
  log: Awaited<ReturnType<typeof listDeliveries>>,
  e: EndpointJson,
  s: Session,
  view: EndpointView,
): Html {
  return html`
    <section aria-labelledby="log-title">
      <h2 id="log-title">Delivery log</h2>
      <p class="muted small">Newest first. Each attempt shows when it was made, what your server answered (status, time, the first 1 KB of its body) or why there was no answer.
        A delivery that fails is retried on a schedule (by default for about 28 hours); Replay sends it again now, with the same <code>webhook-id</code>.</p>
      ${
        log.deliveries.length
          ? html`<table class="list deliveries">
            <thead><tr><th>Event</th><th>Created</th><th>Status</th><th>Attempts</th><th><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>${log.deliveries.map((d) => deliveryRow(d, s, e))}</tbody>
          </table>`
          : html`<p class="empty card">${view.before ? 'No older deliveries.' : 'No deliveries yet. Send a test event, or make a change with the Management API.'}</p>`
      }
      ${
        log.nextBefore || view.before
          ? html`<nav class="pager" aria-label="Pages">
        ${view.before ? html`<a href="/webhooks/${e.id}" class="btn btn-quiet">Newest</a>` : ''}
        ${log.nextBefore ? html`<a href="/webhooks/${e.id}?before=${log.nextBefore}" class="btn btn-quiet">Older deliveries</a>` : ''}
      </nav>`
          : ''
      }
    </section>`;
}

const BEFORE = new RegExp(`^${DELIVERY_ID}$`);

export function endpointView(deps: DashboardDeps, s: Session, endpointId: string, url: URL): Promise<Response> {
  const done = url.searchParams.get('done') ?? '';
  const before = url.searchParams.get('before') ?? '';
  return endpointPage(deps, s, endpointId, {
    notice: Object.hasOwn(DONE, done) ? DONE[done] : undefined,
    before: BEFORE.test(before) ? before : null,
  });
}

/**
 * The endpoint's page again with the problem the module refused an action with (422; 429 with Retry-After for a test
 * event or replay past the endpoint's limit), or 404 for another studio's.
 */
function refused(deps: DashboardDeps, s: Session, endpointId: string, error: AppError): Promise<Response> | Response {
  if (error.code === 'not_found') return noSuchEndpoint(deps, s);
  const limited = error.code === 'rate_limited';
  const view = { error: sentence(error.message) };
  return endpointPage(deps, s, endpointId, view, limited ? 429 : 422, limited ? error.options.headers : {});
}

/** `POST /webhooks/{endpointId}/{action}` (and `GET …/roll`, its confirmation); `form` is null on GET. */
export async function endpointAction(
  deps: DashboardDeps,
  s: Session,
  endpointId: string,
  action: EndpointAction,
  form: FormData | null,
): Promise<Response> {
  const back = (done: string) => redirect(`/webhooks/${endpointId}?done=${done}`);
  switch (action) {
    case 'test': {
      const r = await attempt(() => sendTestEvent(deps.sql, endpointId, s.studioId));
      return r.error ? refused(deps, s, endpointId, r.error) : back('test');
    }
    case 'enable':
    case 'disable': {
      const r = await attempt(() => setEndpointEnabled(deps.sql, endpointId, action === 'enable', s.studioId));
      return r.error ? refused(deps, s, endpointId, r.error) : back(`${action}d`);
    }
    case 'roll': {
      if (!form) return rollConfirmation(deps, s, endpointId);
      // the form names the secret it rolls, so sending it again (a reload that re-posts it) cannot roll twice and end
      // the grace of the secret a receiver still holds
      const from = form.get('from');
      const options = { studioId: s.studioId, from: typeof from === 'string' && from ? from : undefined };
      const r = await attempt(() => rollEndpointSecret(contextOf(deps), endpointId, options));
      if (r.error?.code === 'conflict' && options.from) return rolledAlready(deps, s, endpointId);
      if (r.error) return refused(deps, s, endpointId, r.error);
      return endpointPage(deps, s, endpointId, { reveal: { ...r.ok, rolled: true } }, 201);
    }
    case 'delete': {
      const current = await attempt(() => getEndpoint(deps.sql, endpointId, s.studioId));
      if (current.error) return refused(deps, s, endpointId, current.error);
      if (form!.get('confirm') !== 'yes') return deleteConfirmation(deps, s, endpointJson(current.ok));
      const r = await attempt(() => deleteEndpoint(deps.sql, endpointId, s.studioId));
      return r.error ? refused(deps, s, endpointId, r.error) : redirect('/webhooks?deleted=1');
    }
  }
}

export async function replayWebhookDelivery(
  deps: DashboardDeps,
  s: Session,
  endpointId: string,
  deliveryId: string,
): Promise<Response> {
  const r = await attempt(() => replayDelivery(deps.sql, s.studioId, deliveryId));
  if (r.error) {
    if (r.error.code === 'not_found')
      return messagePage(404, 'No such delivery', 'This studio has no webhook delivery with that id.', chrome(deps, s));
    return refused(deps, s, endpointId, r.error);
  }
  return redirect(`/webhooks/${r.ok.endpointId}?done=replayed`);
}

function actionPage(deps: DashboardDeps, s: Session, title: string, body: Html): Response {
  return page(layout({ title, studio: chrome(deps, s) }, html`<section class="card narrow">${body}</section>`));
}

const rolledAlready = (deps: DashboardDeps, s: Session, endpointId: string) =>
  endpointPage(
    deps,
    s,
    endpointId,
    {
      error:
        'This roll was sent already: the secret was rolled by its first send, and the new secret was shown once, on that answer. The secret before it still signs for its grace. To roll again, use Roll secret below.',
    },
    409,
  );

async function rollConfirmation(deps: DashboardDeps, s: Session, endpointId: string): Promise<Response> {
  const current = await attempt(() => getEndpoint(deps.sql, endpointId, s.studioId));
  if (current.error) return refused(deps, s, endpointId, current.error);
  const e = endpointJson(current.ok);
  return actionPage(
    deps,
    s,
    'Roll signing secret',
    html`<h1>Roll the signing secret?</h1>
    <p class="wrap">Of <code>${e.url}</code>.</p>
    <p>A new secret is made and shown once. <strong>For ${grace}, every delivery is signed with both secrets</strong>: <code>webhook-signature</code> carries one signature per secret, separated by a space,
      so your receiver keeps accepting deliveries with the old secret while you deploy the new one. After ${grace} only the new secret signs.</p>
    ${e.previousSecretExpiresAt ? html`<p class="warning">The secret before the last roll still signs until ${dateIn(s)(e.previousSecretExpiresAt)}; rolling again stops it now.</p>` : ''}
    <form method="post" action="/webhooks/${e.id}/roll" class="row">
      ${hidden(s)}
      <input type="hidden" name="from" value="${secretVersionOf(current.ok)}">
      <button type="submit" class="btn btn-primary">Roll secret</button>
      <a href="/webhooks/${e.id}" class="btn btn-quiet">Cancel</a>
    </form>`,
  );
}

/** Without JavaScript the Delete button lands here; with it, a confirm dialog sends `confirm=yes` directly. */
function deleteConfirmation(deps: DashboardDeps, s: Session, e: EndpointJson): Response {
  return actionPage(
    deps,
    s,
    'Delete endpoint',
    html`<h1>Delete this endpoint?</h1>
    <p class="wrap"><code>${e.url}</code></p>
    <p>Nothing more is sent to it, and its delivery log is deleted with it. This cannot be undone: to receive events again, add the endpoint anew (with a new secret).</p>
    <form method="post" action="/webhooks/${e.id}/delete" class="row">
      ${hidden(s)}
      <input type="hidden" name="confirm" value="yes">
      <button type="submit" class="btn btn-danger">Delete endpoint</button>
      <a href="/webhooks/${e.id}" class="btn btn-quiet">Cancel</a>
    </form>`,
  );
}

export const deletedNotice = (url: URL) =>
  url.searchParams.get('deleted') === '1' ? 'The endpoint is deleted: nothing more is sent to it.' : undefined;
