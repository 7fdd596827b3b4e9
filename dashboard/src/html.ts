import { type Config, escapeHtml, publicUrlOf } from '@studio/shared';
/**
 * HTML building with escaping by default: every interpolated value is escaped
 * unless it is already `Html` (the output of this tag), so user input such as
 * key names can never inject markup.
 */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => (out += render(v) + strings[i + 1]!));
  return new Html(out);
}

/** Security headers on every dashboard response; the CSP allows only our own files (no inline script or style). */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** The signed-in studio, as every page's header shows it. */
export interface StudioChrome {
  name: string;
  id?: string;
  csrf: string;
  current: 'keys' | 'activity' | 'webhooks';
  /** Each surface's API reference. */
  docs?: { storefront: string; management: string };
}

export interface PageChrome {
  title: string;
  /** Signed-in studio: shows the navigation and the sign-out form. */
  studio?: StudioChrome;
}

/** The chrome of a signed-in page. */
export function chromeOf(
  config: Config,
  s: { studioName: string; studioId: string; csrfToken: string },
  current: StudioChrome['current'],
): StudioChrome {
  return {
    name: s.studioName,
    id: s.studioId,
    csrf: s.csrfToken,
    current,
    docs: {
      storefront: `${publicUrlOf(config, 'storefront')}/docs`,
      management: `${publicUrlOf(config, 'management')}/docs`,
    },
  };
}

export function layout(chrome: PageChrome, body: Html): Html {
  const s = chrome.studio;
  const nav = s
    ? html`<nav class="nav" aria-label="Sections">
        <a href="/keys" ${s.current === 'keys' ? html`aria-current="page"` : ''}>API keys</a>
        <a href="/activity" ${s.current === 'activity' ? html`aria-current="page"` : ''}>Activity</a>
        <a href="/webhooks" ${s.current === 'webhooks' ? html`aria-current="page"` : ''}>Webhooks</a>
        ${s.docs ? html`<a href="${s.docs.storefront}" rel="noopener">Storefront docs</a> <a href="${s.docs.management}" rel="noopener">Management docs</a>` : ''}
      </nav>
      <form method="post" action="/logout" class="signout">
        <input type="hidden" name="csrf" value="${s.csrf}">
        <button type="submit" class="btn btn-quiet">Sign out</button>
      </form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${chrome.title} · Developer settings</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/dashboard.css">
<script src="/assets/dashboard.js" defer></script>
</head>
<body>
<header class="top">
  <div class="brand"><span class="brand-mark" aria-hidden="true">◆</span> Developer settings${s ? html` <span class="studio">${s.name}</span>${s.id ? html` <code class="studio-id" title="Studio id">${s.id}</code>` : ''}` : ''}</div>
  ${nav}
</header>
<main class="main">
${body}
</main>
</body>
</html>`;
}

export function page(body: Html, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body.value, {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });
}

export const redirect = (location: string, headers: Record<string, string> = {}) =>
  new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store', ...headers } });

/** A whole page with one message, for errors and notices. */
export function messagePage(
  status: number,
  title: string,
  text: Html | string,
  chrome?: PageChrome['studio'],
): Response {
  const body = html`<section class="card narrow">
    <h1>${title}</h1>
    <p>${text}</p>
    <p><a href="/keys">Back to API keys</a></p>
  </section>`;
  return page(layout({ title, studio: chrome }, body), status);
}

const LOCAL_FORMATS = new Map<string, Intl.DateTimeFormat>();
/** `2026-11-22 18:04:05` in a zone (the studio's), or null for UTC itself or an unknown zone. */
function localTime(d: Date, timeZone: string): string | null {
  if (timeZone === 'UTC') return null;
  let f = LOCAL_FORMATS.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('sv-SE', {
        timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hour12: false,
      });
    } catch {
      return null;
    }
    LOCAL_FORMATS.set(timeZone, f);
  }
  return f.format(d);
}

/**
 * The one way the dashboard writes an instant: `2025-01-02 03:04:05 UTC`, machine-readable
 * in `datetime`, and the studio's local time on hover (`timeZone`).
 */
export function timeTag(d: Date | null, empty = 'Never', timeZone = 'UTC'): Html {
  if (!d) return html`<span class="muted">${empty}</span>`;
  const local = localTime(d, timeZone);
  return html`<time datetime="${d.toISOString()}" ${local ? html`title="${local} ${timeZone}"` : ''}>${d.toISOString().replace('T', ' ').slice(0, 19)} UTC</time>`;
}
