import {
  createSandbox,
  DEFAULT_SANDBOX,
  deleteSandboxes,
  ensureDefaultSandbox,
  listSandboxes,
  MAX_SANDBOXES,
  renameSandbox,
  resetSandbox,
  type SandboxRow,
  sandboxById,
} from '@studio/management-service/sandboxes';
import { AppError } from '@studio/shared';
import type { DashboardDeps } from '../deps';
import {
  chromeOf,
  type Html,
  html,
  layout,
  messagePage,
  page,
  redirect,
  SECTIONS,
  type Section,
  timeTag,
} from '../html';
import { type Session, setMode } from '../signin/session';

/**
 * Test mode (docs/dashboard.md#test-mode): the header's switch, and the Sandboxes page, which lists the live studio's
 * sandboxes and creates, picks, renames, resets and deletes them through `@studio/management-service/sandboxes`, the
 * module the CLI and the API's reset use. A sandbox is reached only as one of the session's live studio's: any
 * other id is 404.
 */

const chrome = (deps: DashboardDeps, s: Session) => chromeOf(deps.config, s, 'sandboxes');
const noSuchSandbox = (deps: DashboardDeps, s: Session) =>
  messagePage(404, 'No such sandbox', 'This studio has no sandbox with that id.', chrome(deps, s));
const hidden = (s: Session) => html`<input type="hidden" name="csrf" value="${s.csrfToken}">`;
const errorLine = (error?: string) =>
  error ? html`<p class="error" role="alert" id="form-error" tabindex="-1">${error}</p>` : '';

/** The header's switch: live mode, or test mode on the sandbox picked last (the default, made on first use). */
export async function switchMode(deps: DashboardDeps, s: Session, form: FormData): Promise<Response> {
  const sent = String(form.get('back') ?? '');
  const back: Section = (SECTIONS as readonly string[]).includes(sent) ? (sent as Section) : 'keys';
  const mode = form.get('mode');
  if (mode === 'live') {
    await setMode(deps.sql, s, false);
    return redirect(`/${back}`);
  }
  if (mode !== 'test')
    return messagePage(422, 'Unknown mode', 'The dashboard has two modes: live and test.', chrome(deps, s));
  try {
    await ensureDefaultSandbox(deps.sql, s.liveStudioId);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return messagePage(err.status, 'No test mode', err.message, chrome(deps, s));
  }
  await setMode(deps.sql, s, true);
  return redirect(`/${back}`);
}

/** Test mode on one of the studio's sandboxes (the Sandboxes page's Use); another studio's is 404. */
export async function useSandbox(deps: DashboardDeps, s: Session, sandboxId: string): Promise<Response> {
  if (!(await setMode(deps.sql, s, true, sandboxId))) return noSuchSandbox(deps, s);
  return redirect('/keys');
}

export interface SandboxesView {
  notice?: string | Html;
  error?: { message: string; name: string };
}

function sandboxRow(sb: SandboxRow, s: Session): Html {
  const date = (iso: string) => timeTag(new Date(iso), undefined, s.studioTimezone);
  const shown = s.sandbox?.id === sb.id;
  const isDefault = sb.name === DEFAULT_SANDBOX;
  return html`<tr data-sandbox-id="${sb.id}" ${shown ? html`class="current"` : ''}>
    <td data-label="Name"><strong class="name">${sb.name}</strong>${isDefault ? html` <span class="badge">default</span>` : ''}${shown ? html` <span class="badge badge-test">shown</span>` : ''}</td>
    <td data-label="Id"><code>${sb.id}</code></td>
    <td data-label="Created">${date(sb.createdAt)}</td>
    <td data-label="Last reset">${date(sb.resetAt)}</td>
    <td class="actions"><div class="actions-row">
      ${
        shown
          ? ''
          : html`<form method="post" action="/sandboxes/${sb.id}/use">${hidden(s)}<button type="submit" class="btn btn-primary">Use</button></form>`
      }
      ${isDefault ? '' : html`<a href="/sandboxes/${sb.id}/rename" class="btn btn-quiet">Rename</a>`}
      <form method="post" action="/sandboxes/${sb.id}/reset" data-confirm="Reset sandbox “${sb.name}”? Its records, events and webhook deliveries are deleted and the demo data seeded again. Its keys and webhook endpoints stay.">
        ${hidden(s)}<button type="submit" class="btn btn-quiet">Reset</button>
      </form>
      ${
        isDefault
          ? ''
          : html`<form method="post" action="/sandboxes/${sb.id}/delete" data-confirm="Delete sandbox “${sb.name}”? Its test keys stop working at once. This cannot be undone.">
        ${hidden(s)}<button type="submit" class="btn btn-danger">Delete</button>
      </form>`
      }
    </div></td>
  </tr>`;
}

function createForm(s: Session, count: number, error?: SandboxesView['error']): Html {
  return html`<form method="post" action="/sandboxes" class="card stack create-sandbox">
    <h2>Create a sandbox</h2>
    <p class="muted small">${count} of ${MAX_SANDBOXES} in use. A new sandbox starts with the demo data: instructors, locations, a month of classes, plans and more. Name: lower-case letters, digits and dashes, such as <code>ci</code> or <code>local-dev</code>.</p>
    ${errorLine(error?.message)}
    ${hidden(s)}
    <label class="field">Name <input name="name" required maxlength="40" placeholder="e.g. ci" value="${error?.name ?? ''}" ${error ? html`autofocus aria-describedby="form-error"` : ''}></label>
    <button type="submit" class="btn btn-primary">Create sandbox</button>
  </form>`;
}

export async function sandboxesPage(
  deps: DashboardDeps,
  s: Session,
  view: SandboxesView = {},
  status = 200,
): Promise<Response> {
  const sandboxes = await listSandboxes(deps.sql, s.liveStudioId);
  const body = html`
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    <section aria-labelledby="sandboxes-title">
      <h1 id="sandboxes-title">Sandboxes</h1>
      <p class="muted">Each sandbox is a studio of its own with test data: its test keys (<code>svc_sk_test_…</code>, <code>svc_pk_test_…</code>), activity and webhooks never touch live data. ${
        s.sandbox
          ? html`The pages show sandbox <strong>${s.sandbox.name}</strong>; <em>Use</em> another to switch.`
          : html`You are in live mode: <em>Use</em> one to switch to test mode.`
      } A reset deletes a sandbox's records, events and webhook deliveries and seeds it again; its keys and webhook endpoints stay.</p>
      ${
        sandboxes.length
          ? html`<table class="list sandboxes">
            <thead><tr><th>Name</th><th>Id</th><th>Created</th><th>Last reset</th><th><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>${sandboxes.map((sb) => sandboxRow(sb, s))}</tbody>
          </table>`
          : html`<p class="empty card">No sandboxes yet. Switch to test mode to make the default one, or create one below.</p>`
      }
    </section>
    ${createForm(s, sandboxes.length, view.error)}`;
  return page(layout({ title: 'Sandboxes', studio: chrome(deps, s) }, body), status);
}

/** The notice of a page drawn after an action (`?created=`, `?reset=`, `?deleted=`), from the studio's own rows. */
export async function sandboxNotice(deps: DashboardDeps, s: Session, url: URL): Promise<Html | undefined> {
  const deleted = url.searchParams.get('deleted');
  if (deleted && /^[a-z0-9][a-z0-9-]{0,39}$/.test(deleted))
    return html`Sandbox “${deleted}” is deleted: its test keys are refused from now on.`;
  for (const what of ['created', 'reset'] as const) {
    const id = url.searchParams.get(what);
    const sb = id && /^std_[0-9A-Za-z]{1,64}$/.test(id) ? await sandboxById(deps.sql, id, s.liveStudioId) : null;
    if (!sb) continue;
    return what === 'created'
      ? html`Sandbox “${sb.name}” is made, with the demo data. <em>Use</em> it to create its test keys.`
      : html`Sandbox “${sb.name}” is reset: its records were deleted and the demo data seeded again at ${timeTag(new Date(sb.resetAt), undefined, s.studioTimezone)}. Its keys and webhook endpoints are kept.`;
  }
  return undefined;
}

/** What `createSandbox` refuses, said at the form. */
function refusal(err: AppError): string {
  if (err.code === 'sandbox_limit_reached')
    return `This studio has ${MAX_SANDBOXES} sandboxes, the most it may have. Delete one you no longer need, or reset one and use it again.`;
  return err.message;
}

export async function createSandboxAction(deps: DashboardDeps, s: Session, form: FormData): Promise<Response> {
  const name = String(form.get('name') ?? '');
  try {
    const made = await createSandbox(deps.sql, s.liveStudioId, name);
    return redirect(`/sandboxes?created=${made.id}`);
  } catch (err) {
    if (!(err instanceof AppError) || !['validation_failed', 'conflict', 'sandbox_limit_reached'].includes(err.code))
      throw err;
    // sent twice (a reload that re-posts it), the name is taken by the sandbox its first send made: one sandbox
    return sandboxesPage(deps, s, { error: { message: refusal(err), name: name.slice(0, 40) } }, err.status);
  }
}

function actionPage(deps: DashboardDeps, s: Session, title: string, body: Html, status = 200): Response {
  return page(layout({ title, studio: chrome(deps, s) }, html`<section class="card narrow">${body}</section>`), status);
}

/** Without JavaScript, Reset and Delete land here; with it, a confirm dialog sends `confirm=yes` directly. */
function confirmPage(deps: DashboardDeps, s: Session, sb: SandboxRow, action: 'reset' | 'delete'): Response {
  const text =
    action === 'reset'
      ? 'Its records, events, idempotency records and webhook deliveries are deleted and the demo data seeded again. Its keys, webhook endpoints and activity stay.'
      : 'Its test keys are refused from the moment you confirm, on every server. This cannot be undone.';
  return actionPage(
    deps,
    s,
    action === 'reset' ? 'Reset sandbox' : 'Delete sandbox',
    html`<h1>${action === 'reset' ? 'Reset' : 'Delete'} sandbox “${sb.name}”?</h1>
    <p>${text}</p>
    <form method="post" action="/sandboxes/${sb.id}/${action}" class="row">
      ${hidden(s)}
      <input type="hidden" name="confirm" value="yes">
      <button type="submit" class="btn btn-danger">${action === 'reset' ? 'Reset sandbox' : 'Delete sandbox'}</button>
      <a href="/sandboxes" class="btn btn-quiet">Cancel</a>
    </form>`,
  );
}

/** A reset as the API's (`POST /v1/sandbox/reset`), in-process: the gateways drop its cached answers before it returns. */
export async function resetAction(deps: DashboardDeps, s: Session, sandboxId: string, form: FormData) {
  const sb = await sandboxById(deps.sql, sandboxId, s.liveStudioId);
  if (!sb) return noSuchSandbox(deps, s);
  if (form.get('confirm') !== 'yes') return confirmPage(deps, s, sb, 'reset');
  await resetSandbox(deps.sql, deps.bus, sb.id, { redis: deps.redis ?? null, prefix: deps.config.REDIS_PREFIX });
  return redirect(`/sandboxes?reset=${sb.id}`);
}

/**
 * One of the studio's sandboxes other than the default, or the page that says why not: 404 for any other id, 409 for
 * the default, which test mode falls back to (it is reset instead, and keeps its name).
 */
async function madeSandbox(deps: DashboardDeps, s: Session, sandboxId: string, refused: [string, string]) {
  const sb = await sandboxById(deps.sql, sandboxId, s.liveStudioId);
  if (!sb) return noSuchSandbox(deps, s);
  return sb.name === DEFAULT_SANDBOX ? messagePage(409, refused[0], refused[1], chrome(deps, s)) : sb;
}

export async function deleteAction(deps: DashboardDeps, s: Session, sandboxId: string, form: FormData) {
  const sb = await madeSandbox(deps, s, sandboxId, [
    'The default sandbox stays',
    'Test mode falls back to the default sandbox, so it is not deleted. Reset it to start it again from the demo data.',
  ]);
  if (sb instanceof Response) return sb;
  if (form.get('confirm') !== 'yes') return confirmPage(deps, s, sb, 'delete');
  // a session showing it falls back to the default (signin/queries.ts)
  await deleteSandboxes(deps.sql, deps.bus, [sb.id]);
  return redirect(`/sandboxes?deleted=${sb.name}`);
}

export async function renameAction(deps: DashboardDeps, s: Session, sandboxId: string, form: FormData | null) {
  const sb = await madeSandbox(deps, s, sandboxId, [
    'The default sandbox keeps its name',
    'Only the sandboxes you made can be renamed.',
  ]);
  if (sb instanceof Response) return sb;
  const name = form ? String(form.get('name') ?? '') : sb.name;
  let error: AppError | undefined;
  if (form) {
    try {
      await renameSandbox(deps.sql, s.liveStudioId, sb.id, name);
      return redirect('/sandboxes');
    } catch (err) {
      if (!(err instanceof AppError) || !['validation_failed', 'conflict'].includes(err.code)) throw err;
      error = err;
    }
  }
  return actionPage(
    deps,
    s,
    'Rename sandbox',
    html`<h1>Rename sandbox “${sb.name}”</h1>
    <p class="muted small">Lower-case letters, digits and dashes. The CLI's <code>--sandbox</code> knows it by this name.</p>
    ${errorLine(error?.message)}
    <form method="post" action="/sandboxes/${sb.id}/rename" class="stack">
      ${hidden(s)}
      <label class="field">Name <input name="name" required maxlength="40" value="${name.slice(0, 40)}" ${error ? html`autofocus aria-describedby="form-error"` : ''}></label>
      <div class="row"><button type="submit" class="btn btn-primary">Save</button> <a href="/sandboxes" class="btn btn-quiet">Cancel</a></div>
    </form>`,
    error ? error.status : 200,
  );
}
