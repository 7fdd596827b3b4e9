import {
  MAX_INSTANT_MS,
  MIN_INSTANT_MS,
  OPERATIONS,
  type Operation,
  PROBLEMS,
  type ProblemCode,
  problemTypeBase,
} from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import type { DashboardDeps } from '../deps';
import { chromeOf, type Html, html, layout, messagePage, page, redirect, timeTag } from '../html';
import type { Session } from '../signin/session';
import { type ChartRange, chartBuckets, chartSvg } from './chart';
import * as q from './queries';
import { type ActivityRow, type Filters, type Frontier, PAGE_SIZE, UNKNOWN_OP } from './queries';

/**
 * The Activity page: a chart of calls and errors, then entries newest first, 50 a
 * page by keyset (at desc, id desc), filtered by key, operation, outcome and date
 * range; a request id (from an error body) opens its entry.
 */

const OUTCOMES = ['success', 'client_error', 'server_error'] as const;
const OUTCOME_LABEL: Record<string, string> = {
  success: 'Success (2xx/3xx)',
  client_error: 'Client error (4xx)',
  server_error: 'Server error (5xx)',
};
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A date filter as a day that exists (2026-02-30 is no day, not 2 March), clamped into the years the log can hold
 * (docs/design/hostile-callers.md: a query instant outside them is clamped, never a 500); '' when it is no date.
 */
function dayFilter(s: string): string {
  if (!DAY.test(s)) return '';
  const ms = Date.parse(`${s}T00:00:00Z`);
  // Date.parse rolls an impossible day over to another (2026-02-30 is 2 March): that is no day
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== s) return '';
  return new Date(Math.min(Math.max(ms, MIN_INSTANT_MS), MAX_INSTANT_MS)).toISOString().slice(0, 10);
}
/** Unknown filter values are dropped rather than refused, so a stale bookmark still shows a page. */
function readFilters(url: URL, keyIds: Set<string>): Filters {
  const q = (n: string) => url.searchParams.get(n) ?? '';
  const operation = q('operation');
  return {
    key: keyIds.has(q('key')) ? q('key') : '',
    operation: operation === UNKNOWN_OP || OPERATIONS.some((o) => o.id === operation) ? operation : '',
    outcome: (OUTCOMES as readonly string[]).includes(q('outcome')) ? q('outcome') : '',
    from: dayFilter(q('from')),
    to: dayFilter(q('to')),
    after: /^\d{1,18}\.\d{1,18}$/.test(q('after')) ? q('after') : '',
  };
}

const option = (value: string, label: string, selected: string) =>
  html`<option value="${value}" ${value === selected ? html`selected` : ''}>${label}</option>`;

/** `/v1/classes/{classId}` -> "Classes". */
const resourceOf = (o: Operation) => {
  const r = o.path.split('/')[2] ?? 'other';
  return r.charAt(0).toUpperCase() + r.slice(1);
};
const OPERATION_GROUPS = Object.entries(Object.groupBy(OPERATIONS, resourceOf)).sort(([a], [b]) => a.localeCompare(b));
const surfaceName = (o: Operation) => (o.surface === 'storefront' ? 'Storefront' : 'Management');

function operationSelect(selected: string): Html {
  return html`<select name="operation">${option('', 'All operations', selected)}
    ${OPERATION_GROUPS.map(([resource, ops]) => html`<optgroup label="${resource}">${ops!.map((o) => option(o.id, `${surfaceName(o)}: ${o.summary}`, selected))}</optgroup>`)}
    ${option(UNKNOWN_OP, 'Unknown route', selected)}</select>`;
}

function filterForm(f: Filters, keys: { id: string; name: string; hint: string; revoked: boolean }[]): Html {
  return html`<form method="get" action="/activity" class="filters card" data-autosubmit>
    <label class="field">Key <select name="key">${option('', 'All keys', f.key)}${keys.map((k) => option(k.id, `${k.name} (${k.hint})${k.revoked ? ' – revoked' : ''}`, f.key))}</select></label>
    <label class="field">Operation ${operationSelect(f.operation)}</label>
    <label class="field">Outcome <select name="outcome">${option('', 'All outcomes', f.outcome)}${OUTCOMES.map((o) => option(o, OUTCOME_LABEL[o]!, f.outcome))}</select></label>
    <label class="field">From (UTC) <input type="date" name="from" value="${f.from}"></label>
    <label class="field">To (UTC) <input type="date" name="to" value="${f.to}"></label>
    <div class="filter-actions"><button type="submit" class="btn btn-primary">Apply</button> <a href="/activity" class="btn btn-quiet">Reset</a></div>
  </form>`;
}

const searchForm = (value = '') => html`<form method="get" action="/activity" class="search card" role="search">
  <label class="field">Find a request by its id <input name="requestId" value="${value}" placeholder="req_… or urn:request:req_… (an error's instance, or X-Request-Id)" spellcheck="false" autocomplete="off"></label>
  <button type="submit" class="btn btn-primary">Open</button>
</form>`;

const OPERATION_BY_ID = new Map(OPERATIONS.map((o) => [o.id as string, o]));
/** `managementListInstructors` with a break opportunity before each capital: a narrow cell wraps it between words, never inside one. */
const camelBreaks = (id: string): Html =>
  html`${id.split(/(?=[A-Z])/).map((part, i) => (i ? html`<wbr>${part}` : part))}`;

/** The operation of an entry as people read it: its summary, then its id (the filter and the API's word for it). */
function operationCell(operationId: string | null): Html {
  const op = operationId ? OPERATION_BY_ID.get(operationId) : undefined;
  if (!operationId) return html`<td data-label="Operation"><span class="muted">unknown route</span></td>`;
  return html`<td data-label="Operation" class="op" data-operation="${operationId}">${op ? html`<span class="op-name">${op.summary}</span><br>` : ''}<code class="op-id small">${camelBreaks(operationId)}</code></td>`;
}

function row(r: ActivityRow, s: Session): Html {
  const cls = r.outcome === 'success' ? 'ok' : r.outcome === 'client_error' ? 'warn' : 'bad';
  return html`<tr data-request-id="${r.requestId}">
    <td data-label="Time">${timeTag(r.at, undefined, s.studioTimezone)}</td>
    <td data-label="Key">${r.keyName === null ? html`<span class="muted">deleted key</span>` : html`${r.keyName} <code>${r.keyHint}</code>`}</td>
    ${operationCell(r.operationId)}
    <td data-label="Request" class="req"><span class="method">${r.method}</span> <code class="path">${r.path}${r.query ? `?${r.query}` : ''}</code></td>
    <td data-label="Status"><span class="status ${cls}">${r.status}</span>${r.problemCode ? html` <code class="small">${r.problemCode}</code>` : ''}${r.refusedCount ? html` <span class="small" title="calls from this key and address (IPv6: its /64) refused in this second, kept as this one entry">×${r.refusedCount}</span>` : ''}</td>
    <td data-label="Duration" class="num">${Math.round(r.durationMs * 10) / 10} ms</td>
    <td data-label="Request id"><a href="/activity/${r.requestId}" class="entry-link"><code class="small">${r.requestId}</code></a></td>
  </tr>`;
}

function pager(f: Filters, more: boolean, last: ActivityRow | undefined): Html {
  const params = (after?: string) => {
    const p = new URLSearchParams();
    for (const n of ['key', 'operation', 'outcome', 'from', 'to'] as const) if (f[n]) p.set(n, f[n]);
    if (after) p.set('after', after);
    return p.size ? `?${p}` : '';
  };
  return html`<nav class="pager" aria-label="Pages">
    ${f.after ? html`<a href="/activity${params()}" class="btn btn-quiet">Newest</a>` : ''}
    ${more ? html`<a href="/activity${params(last && `${last.atUs}.${last.id}`)}" class="btn btn-quiet" rel="next">Older entries →</a>` : ''}
  </nav>`;
}

/**
 * The request id in what a developer pasted: the id itself, or a problem's `instance`
 * (`urn:request:req_…`), which is what they copy from an error; spaces and quotes around it
 * (copied from a JSON body) are dropped.
 */
export function searchedRequestId(text: string): string {
  const bare = text
    .trim()
    .replace(/^["']|["'],?$/g, '')
    .trim();
  return bare.replace(/^urn:request:/i, '');
}

/** Compares entries newest first: by time, then id (both integers as text, compared as integers). */
const newestFirst = (a: ActivityRow, b: ActivityRow) =>
  a.atUs === b.atUs ? Number(BigInt(b.id) - BigInt(a.id)) : Number(BigInt(b.atUs) - BigInt(a.atUs));

/**
 * A page of entries (PAGE_SIZE and one more, to know whether older ones follow), or null when finding them took
 * longer than `activitySearch.timeoutMs`. Batches are read newest `last_at` first, in rounds of 4, 16, 64... An entry
 * found is placed for good once it is later than the last batch read's `last_at`: no batch not yet read holds a
 * later entry (each holds entries at or before its own `last_at`, and comes after in that order).
 */
async function searchPage(sql: Sql, studioId: string, f: Filters): Promise<ActivityRow[] | null> {
  return q.withinBudget(sql, async (tx, budget) => {
    let found: ActivityRow[] = [];
    let frontier: Frontier | null = null;
    for (let batches = 4; ; batches = Math.min(batches * 4, 1024)) {
      await budget();
      const rows = await q.pageRoundQuery(tx, studioId, f, frontier, batches);
      const { read, lastId, lastUs } = rows[0]!;
      for (const r of rows) if (r.id != null) found.push(r as ActivityRow);
      found = found.sort(newestFirst).slice(0, PAGE_SIZE + 1);
      if (read < batches || lastId === null || lastUs === null) return found;
      frontier = { lastUs, id: lastId };
      const last = found[PAGE_SIZE];
      if (last && BigInt(last.atUs) > BigInt(lastUs)) return found;
    }
  });
}

export async function activityPage(deps: DashboardDeps, s: Session, url: URL): Promise<Response> {
  const { sql } = deps;
  // `request` is what the search form sent before docs/design/dashboard.md named it
  const searched = url.searchParams.get('requestId') ?? url.searchParams.get('request');
  if (searched?.trim()) return findEntry(deps, s, searchedRequestId(searched), searched.trim());
  const keys = await q.keysOf(sql, s.studioId);
  const f = readFilters(url, new Set(keys.map((k) => k.id)));
  const range: ChartRange = url.searchParams.get('chart') === '30d' ? '30d' : '24h';
  const [found, buckets] = await Promise.all([searchPage(sql, s.studioId, f), chartBuckets(sql, s.studioId, range)]);
  const rows = found ?? [];
  const more = rows.length > PAGE_SIZE;
  const shown = rows.slice(0, PAGE_SIZE);
  const filtered = Boolean(f.key || f.operation || f.outcome || f.from || f.to);
  const body = html`<h1>Activity</h1>
    <p class="muted">Every call made with this studio's keys, newest first. New calls appear within a second or two; entries are kept 90 days. Times are UTC; hover one for the studio's local time (${s.studioTimezone}).</p>
    <section class="card chart-card" aria-label="Traffic">
      <div class="row spread"><h2 class="h3">${range === '24h' ? 'Last 24 hours, per hour' : 'Last 30 days, per day'}</h2>
        <span class="legend"><span class="swatch calls"></span> calls <span class="swatch errors"></span> errors ·
          ${range === '24h' ? html`<a href="/activity?chart=30d">30 days</a>` : html`<a href="/activity">24 hours</a>`}</span></div>
      ${chartSvg(buckets, range)}
    </section>
    ${searchForm()}
    ${filterForm(f, keys)}
    ${
      shown.length
        ? html`<table class="list activity">
          <thead><tr><th>Time (UTC)</th><th>Key</th><th>Operation</th><th>Request</th><th>Status</th><th>Duration</th><th>Request id</th></tr></thead>
          <tbody>${shown.map((r) => row(r, s))}</tbody>
        </table>`
        : found === null
          ? html`<p class="empty card notice" role="status">Finding these entries reads too much of the log at once. Narrow the search: choose dates (From, To) or a key.</p>`
          : html`<p class="empty card">${f.after ? 'No older entries.' : filtered ? 'No calls match these filters.' : 'No calls yet. Calls made with your keys will show up here.'}</p>`
    }
    ${pager(f, more, shown.at(-1))}`;
  return page(layout({ title: 'Activity', studio: chromeOf(deps.config, s, 'activity') }, body));
}

const entryOf = async (sql: Sql, studioId: string, requestId: string): Promise<ActivityRow | undefined> =>
  (await q.entryQuery(sql, studioId, requestId))[0];

/** A request id searched for (`typed`: as sent): its entry, or a page that says none of this studio's calls has it. */
async function findEntry(deps: DashboardDeps, s: Session, requestId: string, typed: string): Promise<Response> {
  if (/^[0-9A-Za-z_-]{1,100}$/.test(requestId) && (await entryOf(deps.sql, s.studioId, requestId)))
    return redirect(`/activity/${requestId}`);
  const body = html`<h1>Activity</h1>${searchForm(typed)}
    <p class="empty card" role="status">No entry of this studio has the request id <code>${requestId}</code>. Entries appear a second or two after the call and are kept 90 days. Calls refused with 429 are kept as one entry per key, address and second, under the first one's request id: a later one of that second has no entry of its own (its entry says how many were refused).</p>
    <p><a href="/activity">All activity</a></p>`;
  return page(layout({ title: 'Activity', studio: chromeOf(deps.config, s, 'activity') }, body), 404);
}

/** `/activity/{requestId}`: everything the log knows of one call. */
export async function activityEntryPage(deps: DashboardDeps, s: Session, requestId: string): Promise<Response> {
  const r = await entryOf(deps.sql, s.studioId, requestId);
  const chrome = chromeOf(deps.config, s, 'activity');
  if (!r) return messagePage(404, 'No such entry', 'This studio has no activity entry with that request id.', chrome);
  const surface =
    r.operationId?.startsWith('storefront') || (!r.operationId && r.keyKind === 'publishable')
      ? 'storefront'
      : 'management';
  const problem = r.problemCode
    ? html`<a href="${problemTypeBase(deps.config, surface)}${r.problemCode}"><code>${r.problemCode}</code></a>: ${r.problemDetail ?? PROBLEMS[r.problemCode as ProblemCode]?.[1] ?? ''}`
    : html`<span class="muted">none</span>`;
  const unknown = html`<span class="muted">not recorded</span>`;
  const op = OPERATIONS.find((o) => o.id === r.operationId);
  const item = (label: string, value: Html | string) => html`<dt>${label}</dt><dd>${value}</dd>`;
  const body = html`<p><a href="/activity">← Activity</a></p>
    <section class="card entry" aria-labelledby="entry-title">
      <h1 id="entry-title"><span class="method">${r.method}</span> <code class="path">${r.path}${r.query ? `?${r.query}` : ''}</code></h1>
      <dl class="facts">
        ${item('Time', timeTag(r.at, undefined, s.studioTimezone))}
        ${item('Status', html`<span class="status ${r.outcome === 'success' ? 'ok' : r.outcome === 'client_error' ? 'warn' : 'bad'}">${r.status}</span> ${OUTCOME_LABEL[r.outcome] ?? r.outcome}`)}
        ${item('Problem', problem)}
        ${r.refusedCount ? item('Refused calls', `${r.refusedCount} in this second from this key and address (IPv6: its /64; one entry stands for them all)`) : ''}
        ${item('Operation', op ? html`<code>${op.id}</code> (${surfaceName(op)}: ${op.summary})` : html`<span class="muted">unknown route</span>`)}
        ${item('Query string', r.query ? html`<code>${r.query}</code>` : html`<span class="muted">none</span>`)}
        ${item('Duration', `${Math.round(r.durationMs * 100) / 100} ms at the gateway`)}
        ${item('Key', r.keyName === null ? html`<span class="muted">deleted key</span>` : html`${r.keyName} <code>${r.keyHint}</code> (${r.keyKind})`)}
        ${item('Request id', html`<code>${r.requestId}</code>`)}
        ${item('Trace id', r.traceId ? html`<code>${r.traceId}</code>` : unknown)}
        ${item('Client address', r.clientAddress ? html`<code>${r.clientAddress}</code>` : unknown)}
        ${item('User agent', r.userAgent ? html`<code class="small">${r.userAgent}</code>` : unknown)}
      </dl>
    </section>`;
  return page(layout({ title: `Activity ${r.requestId}`, studio: chrome }, body));
}
