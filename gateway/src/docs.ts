import { brotliCompressSync, constants } from 'node:zlib';
import {
  type Config,
  escapeHtml,
  JSON_TYPE,
  jsonResponse,
  log,
  openApiDocument,
  PROBLEM_CODES,
  PROBLEM_DOCS,
  PROBLEMS,
  problemResponse,
  problemTypeBase,
  publicUrlOf,
  type Surface,
} from '@studio/shared';
import type { ReadinessCheck } from '@studio/shared/io';

export type DocsHandler = (surface: Surface, path: string, requestId: string, req: Request) => Promise<Response>;

/** `/docs/problems`: every problem code, what causes it and how to fix it (the target of each problem's `type` URI). */
export function problemsPage(): string {
  const entries = PROBLEM_CODES.map((code) => {
    const [status, title] = PROBLEMS[code];
    const { cause, fix } = PROBLEM_DOCS[code];
    return `<section id="${code}"><h2><code>${code}</code> <span class="status">${status}</span> ${escapeHtml(title)}</h2>
<dl><dt>Cause</dt><dd>${escapeHtml(cause)}</dd><dt>Fix</dt><dd>${escapeHtml(fix)}</dd></dl></section>`;
  }).join('\n');
  const index = PROBLEM_CODES.map((code) => `<a href="#${code}"><code>${code}</code></a>`).join(' ');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,"><title>Studio API problem codes</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
section{border-top:1px solid #ddd;padding:.5rem 0}section:target{background:#fff3c4}h2{font-size:1.05rem;margin:.5rem 0}
.status{color:#666;font-weight:normal}dt{font-weight:600}dd{margin:0 0 .5rem 0}nav{line-height:2;word-break:break-word}code{font-size:.95em}</style></head><body>
<h1>Problem codes</h1><p>Every error is <code>application/problem+json</code> with <code>type</code>, <code>title</code>, <code>status</code>,
<code>detail</code>, <code>code</code> and <code>instance</code> (<code>urn:request:&lt;X-Request-Id&gt;</code>); 422 bodies add <code>errors</code>.
Branch on <code>status</code> and <code>code</code>. Back to the <a href="/docs">API reference</a>.</p>
<nav>${index}</nav>
${entries}</body></html>`;
}

/** Scalar's self-contained browser bundle, pinned in package.json and served by the gateway itself. */
// the package exports no path to it, so it is found next to its main entry (dist/index.js)
const SCALAR_PATH = Bun.fileURLToPath(new URL('./browser/standalone.js', import.meta.resolve('@scalar/api-reference')));

/** A static asset kept in memory with its strong tag and brotli / gzip copies (Scalar's bundle is 4 MB raw). */
interface Asset {
  identity: Blob;
  br: Blob;
  gzip: Blob;
  etag: string;
  type: string;
}
async function loadAsset(path: string, type: string): Promise<Asset> {
  const identity = new Uint8Array(await Bun.file(path).arrayBuffer());
  return {
    identity: new Blob([identity]),
    type,
    br: new Blob([brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 6 } })]),
    gzip: new Blob([Bun.gzipSync(identity)]),
    etag: `"${new Bun.CryptoHasher('sha256').update(identity).digest('base64url').slice(0, 22)}"`,
  };
}

function serveAsset(asset: Asset, req: Request): Response {
  const headers: Record<string, string> = {
    'content-type': asset.type,
    etag: asset.etag,
    'cache-control': 'public, max-age=86400',
    vary: 'Accept-Encoding',
  };
  if (req.headers.get('if-none-match') === asset.etag) return new Response(null, { status: 304, headers });
  const accept = req.headers.get('accept-encoding') ?? '';
  if (/\bbr\b/.test(accept)) return new Response(asset.br, { headers: { ...headers, 'content-encoding': 'br' } });
  if (/\bgzip\b/.test(accept)) return new Response(asset.gzip, { headers: { ...headers, 'content-encoding': 'gzip' } });
  return new Response(asset.identity, { headers });
}

/**
 * What the reference's code samples and "Test Request" put in `Authorization` until a visitor
 * enters a key: the kind of key the surface takes (Scalar's own placeholder, `YOUR_SECRET_TOKEN`,
 * told Storefront readers to send a secret).
 */
const KEY_PLACEHOLDER = {
  storefront: ['PublishableKeyAuth', 'svc_pk_YOUR_PUBLISHABLE_KEY'],
  management: ['SecretKeyAuth', 'svc_sk_YOUR_SECRET_KEY'],
} as const;

/** The API reference page: Scalar from this origin, reading this surface's document, no fonts or services from elsewhere. */
function referencePage(surface: Surface): string {
  const title = surface === 'storefront' ? 'Studio API: Storefront reference' : 'Studio API: Management reference';
  const [scheme, token] = KEY_PLACEHOLDER[surface];
  // no hosted services (AI agent, MCP generator, proxy, fonts): everything the page needs comes from here.
  // No download button: the page shows a copy of the document adapted for Test Request (REFERENCE_JS);
  // the document itself is linked from its description.
  const configuration = {
    url: '/openapi.json',
    withDefaultFonts: false,
    hideClientButton: true,
    showDeveloperTools: 'never',
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    defaultOpenAllTags: true,
    documentDownloadType: 'none',
    authentication: { preferredSecurityScheme: scheme, securitySchemes: { [scheme]: { token } } },
  };
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,"><title>${title}</title></head><body>
<div id="app" data-configuration="${escapeHtml(JSON.stringify(configuration))}"></div>
<script src="/docs/scalar.js"></script><script src="/docs/reference.js"></script>
<noscript><p>The interactive reference needs JavaScript. The OpenAPI document is at <a href="/openapi.json">/openapi.json</a>; problem codes at <a href="/docs/problems">/docs/problems</a>.</p></noscript>
</body></html>`;
}
/**
 * Mounts Scalar with the page's configuration (a file, not inline, so the CSP allows scripts
 * from this origin only). Each write's Idempotency-Key shows as Scalar's `{{$randomUUID}}`
 * and is replaced on every send by a fresh random UUID (Scalar's own variable picks one of 15
 * fixed UUIDs), so a visitor's second write is not 409; a value the visitor types is sent as
 * typed. `getRandomValues`, not `randomUUID`: a studio's closed network may serve plain http.
 */
const REFERENCE_JS = `const app = document.getElementById('app');
const { url, ...config } = JSON.parse(app.dataset.configuration);
const FRESH = '{{$randomUUID}}';
function uuid() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 15) | 64;
  b[8] = (b[8] & 63) | 128;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
}
function onBeforeRequest({ requestBuilder }) {
  const headers = requestBuilder && requestBuilder.headers;
  if (headers && typeof headers.get === 'function' && headers.get('idempotency-key') === FRESH) headers.set('idempotency-key', uuid());
}
fetch(url).then((r) => r.json()).then((doc) => {
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) for (const p of op.parameters || []) if (p.in === 'header' && p.name === 'Idempotency-Key') p.example = FRESH;
  }
  Scalar.createApiReference(app, { ...config, content: doc, onBeforeRequest });
}, () => Scalar.createApiReference(app, { ...config, url }));
`;
/** The browser may load nothing from another host, whatever the bundle tries (studios run this on closed networks). */
const REFERENCE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; frame-ancestors 'none'";

/**
 * The gateway's keyless paths: its own health, each surface's OpenAPI document (built
 * from the operations registry, as the services' routes are), the reference page and the
 * problems page. Nothing is fetched from a service or another host.
 */
/** `state.draining`: the gateway is stopping; `state.paused`: it is retaking its lock (single-node mode). Either way `/readyz` answers 503. */
export function createDocsHandler(config: Config, readiness: ReadinessCheck, scalarPath = SCALAR_PATH): DocsHandler {
  const page = problemsPage();
  const documents = new Map<Surface, string>();
  const documentOf = (surface: Surface) => {
    let doc = documents.get(surface);
    if (!doc) {
      doc = JSON.stringify(openApiDocument(surface, { publicUrl: publicUrlOf(config, surface) }));
      documents.set(surface, doc);
    }
    return doc;
  };
  let scalar: Promise<Asset> | undefined;
  return async (surface, path, requestId, req) => {
    if (path === '/healthz') return jsonResponse({ status: 'ok' });
    if (path === '/readyz') return readiness();
    if (path === '/openapi.json')
      return new Response(documentOf(surface), {
        headers: { 'content-type': JSON_TYPE, 'cache-control': 'public, max-age=300' },
      });
    if (path === '/docs')
      return new Response(referencePage(surface), {
        headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': REFERENCE_CSP },
      });
    if (path === '/docs/reference.js')
      return new Response(REFERENCE_JS, {
        headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300' },
      });
    if (path === '/docs/scalar.js') {
      // a bundle that could not be read is tried again on the next call (a kept rejection would fail every one after)
      const asset = await (scalar ??= loadAsset(scalarPath, 'text/javascript; charset=utf-8')).catch((err) => {
        scalar = undefined;
        log('error', 'the API reference bundle could not be read', { requestId, error: String(err) });
        return null;
      });
      if (!asset)
        return problemResponse('internal_error', requestId, {
          detail: 'The API reference bundle could not be read; the OpenAPI document is at /openapi.json.',
          typeBase: problemTypeBase(config, surface),
        });
      return serveAsset(asset, req);
    }
    if (path === '/docs/problems')
      return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    return problemResponse('route_not_found', requestId, { typeBase: problemTypeBase(config, surface) });
  };
}
