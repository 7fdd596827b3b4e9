import { OPERATIONS } from '@studio/shared';
import type { Sql } from '@studio/shared/db';
import { html, layout, page, type Html } from './html';
import type { Session } from './session';

/** The Activity page: newest first, 50 a page by keyset (at desc, id desc), filters by key, operation, outcome. */

export const PAGE_SIZE = 50;
const OUTCOMES = ['success', 'client_error', 'server_error'] as const;
const OUTCOME_LABEL: Record<string, string> = { success: 'Success (2xx/3xx)', client_error: 'Client error (4xx)', server_error: 'Server error (5xx)' };
/** Filter value for entries with no operation (an unknown route). */
const UNKNOWN_OP = 'unknown';

interface Filters {
  key: string;
  operation: string;
  outcome: string;
  /** Id of the last entry of the previous page. */
  after: string;
}

interface ActivityRow {
  id: string;
  at: Date;
  operationId: string | null;
  method: string;
  path: string;
  status: number;
  outcome: string;
  durationMs: number;
  requestId: string;
  keyName: string | null;
  keyHint: string | null;
}

/** Unknown filter values are dropped rather than refused, so a stale bookmark still shows a page. */
function readFilters(url: URL, keyIds: Set<string>): Filters {
  const q = (n: string) => url.searchParams.get(n) ?? '';
  const operation = q('operation');
  return {
    key: keyIds.has(q('key')) ? q('key') : '',
    operation: operation === UNKNOWN_OP || OPERATIONS.some((o) => o.id === operation) ? operation : '',
    outcome: (OUTCOMES as readonly string[]).includes(q('outcome')) ? q('outcome') : '',
    after: /^\d{1,18}$/.test(q('after')) ? q('after') : '',
  };
}

async function queryActivity(sql: Sql, studioId: string, f: Filters): Promise<ActivityRow[]> {
  return sql<ActivityRow[]>`
    select a.id::text as id, a.at, a.operation_id, a.method, a.path, a.status, a.outcome, a.duration_ms, a.request_id,
           k.name as key_name, k.hint as key_hint
    from activity a left join api_keys k on k.id = a.key_id and k.studio_id = a.studio_id
    where a.studio_id = ${studioId}
      ${f.key ? sql`and a.key_id = ${f.key}` : sql``}
      ${f.operation === UNKNOWN_OP ? sql`and a.operation_id is null` : f.operation ? sql`and a.operation_id = ${f.operation}` : sql``}
      ${f.outcome ? sql`and a.outcome = ${f.outcome}` : sql``}
      ${f.after ? sql`and (a.at, a.id) < (select at, id from activity where studio_id = ${studioId} and id = ${f.after})` : sql``}
    order by a.at desc, a.id desc
    limit ${PAGE_SIZE + 1}`;
}

const option = (value: string, label: string, selected: string) =>
  html`<option value="${value}" ${value === selected ? html`selected` : ''}>${label}</option>`;

function filterForm(f: Filters, keys: { id: string; name: string; hint: string; revoked: boolean }[]): Html {
  return html`<form method="get" action="/activity" class="filters card" data-autosubmit>
    <label class="field">Key <select name="key">${option('', 'All keys', f.key)}${keys.map((k) => option(k.id, `${k.name} (${k.hint})${k.revoked ? ' – revoked' : ''}`, f.key))}</select></label>
    <label class="field">Operation <select name="operation">${option('', 'All operations', f.operation)}${OPERATIONS.map((o) => option(o.id, o.id, f.operation))}${option(UNKNOWN_OP, 'Unknown route', f.operation)}</select></label>
    <label class="field">Outcome <select name="outcome">${option('', 'All outcomes', f.outcome)}${OUTCOMES.map((o) => option(o, OUTCOME_LABEL[o]!, f.outcome))}</select></label>
    <div class="filter-actions"><button type="submit" class="btn btn-primary">Apply</button> <a href="/activity" class="btn btn-quiet">Reset</a></div>
  </form>`;
}

function row(r: ActivityRow): Html {
  const cls = r.outcome === 'success' ? 'ok' : r.outcome === 'client_error' ? 'warn' : 'bad';
  return html`<tr data-request-id="${r.requestId}">
    <td data-label="Time"><time datetime="${r.at.toISOString()}">${r.at.toISOString()}</time></td>
    <td data-label="Key">${r.keyName === null ? html`<span class="muted">deleted key</span>` : html`${r.keyName} <code>${r.keyHint}</code>`}</td>
    <td data-label="Operation">${r.operationId ? html`<code class="op">${r.operationId}</code>` : html`<span class="muted">unknown route</span>`}</td>
    <td data-label="Request" class="req"><span class="method">${r.method}</span> <code class="path">${r.path}</code></td>
    <td data-label="Status"><span class="status ${cls}">${r.status}</span></td>
    <td data-label="Duration" class="num">${Math.round(r.durationMs * 10) / 10} ms</td>
    <td data-label="Request id"><code class="small">${r.requestId}</code></td>
  </tr>`;
}

export async function activityPage(sql: Sql, s: Session, url: URL): Promise<Response> {
  const keys = await sql<{ id: string; name: string; hint: string; revoked: boolean }[]>`
    select id, name, hint, revoked_at is not null as revoked from api_keys where studio_id = ${s.studioId} order by created_at desc, id desc`;
  const f = readFilters(url, new Set(keys.map((k) => k.id)));
  const rows = await queryActivity(sql, s.studioId, f);
  const more = rows.length > PAGE_SIZE;
  const shown = rows.slice(0, PAGE_SIZE);
  const next = new URLSearchParams();
  for (const n of ['key', 'operation', 'outcome'] as const) if (f[n]) next.set(n, f[n]);
  if (more) next.set('after', shown.at(-1)!.id);
  const filtered = Boolean(f.key || f.operation || f.outcome);
  const body = html`<h1>Activity</h1>
    <p class="muted">Every call made with this studio's keys, newest first. New calls appear within a second or two; entries are kept 90 days.</p>
    ${filterForm(f, keys)}
    ${shown.length
      ? html`<table class="list activity">
          <thead><tr><th>Time (UTC)</th><th>Key</th><th>Operation</th><th>Request</th><th>Status</th><th>Duration</th><th>Request id</th></tr></thead>
          <tbody>${shown.map(row)}</tbody>
        </table>`
      : html`<p class="empty card">${f.after ? 'No older entries.' : filtered ? 'No calls match these filters.' : 'No calls yet. Calls made with your keys will show up here.'}</p>`}
    <nav class="pager" aria-label="Pages">
      ${f.after ? html`<a href="/activity${filtered ? `?${new URLSearchParams(Object.entries(f).filter(([k, v]) => k !== 'after' && v))}` : ''}" class="btn btn-quiet">Newest</a>` : ''}
      ${more ? html`<a href="/activity?${next.toString()}" class="btn btn-quiet" rel="next">Older entries →</a>` : ''}
    </nav>`;
  return page(layout({ title: 'Activity', studio: { name: s.studioName, csrf: s.csrfToken, current: 'activity' } }, body));
}
