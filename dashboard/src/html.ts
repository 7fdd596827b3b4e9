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
  /** The id of the studio the pages show: the live studio's, or in test mode the sandbox's. */
  id?: string;
  /** The token of the page's mode (the switch and sign-out take any of the session's). */
  csrf: string;
  current: Section;
  /** Each surface's API reference. */
  docs?: { storefront: string; management: string };
  /** Test mode: the sandbox the pages show (absent in live mode). */
  sandbox?: { id: string; name: string };
}

/** The sections of the header's navigation; the mode switch returns to the one it was sent from. */
export const SECTIONS = ['keys', 'activity', 'webhooks', 'sandboxes'] as const;
export type Section = (typeof SECTIONS)[number];

export interface PageChrome {
  title: string;
  /** Signed-in studio: shows the navigation and the sign-out form. */
  studio?: StudioChrome;
}

/** The chrome of a signed-in page. */
export function chromeOf(
  config: Config,
  s: {
    studioName: string;
    studioId: string;
    csrfToken: string;
    sandbox: { id: string; name: string } | null;
  },
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
    ...(s.sandbox ? { sandbox: s.sandbox } : {}),
  };
}

const navLink = (s: StudioChrome, section: Section, label: string) =>
  html`<a href="/${section}" ${s.current === section ? html`aria-current="page"` : ''}>${label}</a>`;

/** Stripe's "Test mode" toggle: a form, so it works without JavaScript; it returns to the same section. */
function modeSwitch(s: StudioChrome): Html {
  const test = Boolean(s.sandbox);
  return html`<form method="post" action="/mode" class="mode-switch">
    <input type="hidden" name="csrf" value="${s.csrf}">
    <input type="hidden" name="mode" value="${test ? 'live' : 'test'}">
    <input type="hidden" name="back" value="${s.current}">
    <button type="submit" class="switch" role="switch" aria-checked="${test ? 'true' : 'false'}" title="${test ? 'Switch to live mode: your studio’s real data and keys' : 'Switch to test mode: a sandbox with test data and test keys'}"><span class="switch-track" aria-hidden="true"><span class="switch-thumb"></span></span> Test mode</button>
  </form>`;
}

/** What makes test mode unmistakable: a band across the top of every page, above the header. */
const testBand = (sandbox: { id: string; name: string }) =>
  html`<div class="test-band" role="note"><strong>TEST MODE</strong> — sandbox <strong class="test-band-name">${sandbox.name}</strong>: test data, test keys; nothing here touches live data. <a href="/sandboxes">Sandboxes</a></div>`;

export function layout(chrome: PageChrome, body: Html): Html {
  const s = chrome.studio;
  const test = s?.sandbox;
  const nav = s
    ? html`<nav class="nav" aria-label="Sections">
        ${navLink(s, 'keys', 'API keys')}
        ${navLink(s, 'activity', 'Activity')}
        ${navLink(s, 'webhooks', 'Webhooks')}
        ${test ? navLink(s, 'sandboxes', 'Sandboxes') : ''}
        ${s.docs ? html`<a href="${s.docs.storefront}" rel="noopener">Storefront docs</a> <a href="${s.docs.management}" rel="noopener">Management docs</a>` : ''}
      </nav>
      ${modeSwitch(s)}
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
<title>${test ? 'TEST MODE · ' : ''}${chrome.title} · Developer settings</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/dashboard.css">
<script src="/assets/dashboard.js" defer></script>
</head>
<body${test ? html` class="test-mode"` : ''}>
${test ? testBand(test) : ''}
<header class="top">
  <div class="brand"><span class="brand-mark" aria-hidden="true">◆</span> Developer settings${s ? html` <span class="studio">${s.name}</span>${test ? html` <span class="mode-badge">Test mode</span>` : ''}${s.id ? html` <code class="studio-id" title="${test ? `Sandbox ${test.name}: a studio of its own` : 'Studio id'}">${s.id}</code>` : ''}` : ''}</div>
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
