/**
 * The Streamable HTTP transport, stateless (docs/design/mcp.md): every POST to `/mcp` is answered by a server made for
 * it, for the key in its `Authorization: Bearer`, and forgotten. Refused before any of that: a foreign `Origin` (403),
 * no key (401, `WWW-Authenticate: Bearer realm="studio-api"`, no OAuth metadata), a body over the API's 1 MiB.
 * Each call to the API forwards the agent's address (`X-Forwarded-For`), which the gateway believes from a trusted
 * proxy, so per-address limits and the activity log's address stay the agent's.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  AppError,
  type Config,
  JSON_TYPE,
  jsonDepth,
  jsonResponse,
  MAX_BODY_BYTES,
  mcpAllowedOrigins,
  readBody,
  requestTarget,
} from '@studio/shared';
import { forwardingFor } from './clients';
import { createKeyDescriber, type KeyDescriber } from './keys';
import { createSessionServer, parseToolsets, surfaceOfKey } from './server';
import { clientOfSession, sessionIdOf } from './session';

type Urls = Pick<Config, 'STOREFRONT_PUBLIC_URL' | 'MANAGEMENT_PUBLIC_URL' | 'MCP_ALLOWED_ORIGINS'>;

/** What Bun's server offers the handler: the peer's address. */
export interface Peer {
  requestIP(req: Request): { address: string } | null;
}

const REALM = 'Bearer realm="studio-api"';
/** How long a body may take to arrive whole, as at the gateway (REQUEST_BODY_TIMEOUT_MS's default). */
const BODY_DEADLINE_MS = 60_000;

/** An HTTP refusal with a JSON-RPC error body without an id, as the transport specification allows. */
function refusal(status: number, message: string, headers: Record<string, string> = {}): Response {
  return jsonResponse({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status, headers });
}

const unauthorized = (message: string, error?: string) =>
  refusal(401, message, {
    'www-authenticate': error
      ? `${REALM}, error="${error}", error_description="${message.replaceAll('"', "'")}"`
      : REALM,
  });

const bearer = (req: Request): string | null => {
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.get('authorization') ?? '');
  return m ? m[1]! : null;
};

const isInitialize = (body: unknown) =>
  !!body && typeof body === 'object' && (body as { method?: unknown }).method === 'initialize';

export interface McpHttpOptions {
  config: Urls;
  describer?: KeyDescriber;
}

/** The body as JSON, within the API's limits (1 MiB, 60 s, 32 levels), or the refusal to answer with. */
async function jsonBodyOf(req: Request): Promise<{ body: unknown } | Response> {
  try {
    const text = new TextDecoder().decode(await readBody(req, MAX_BODY_BYTES, BODY_DEADLINE_MS));
    if (jsonDepth(text) > 32) return refusal(400, 'The body is nested too deep (32 levels at most).');
    return { body: JSON.parse(text) };
  } catch (err) {
    if (err instanceof AppError) return refusal(err.status, err.message, err.options.headers);
    return jsonResponse({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }, { status: 400 });
  }
}

/** One JSON-RPC message answered by a server made for it, then closed (stateless). */
async function answerOnce(
  req: Request,
  body: unknown,
  session: Parameters<typeof createSessionServer>[0],
): Promise<Response> {
  const server = createSessionServer(session);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  await server.connect(transport);
  try {
    const res = await transport.handleRequest(req, { parsedBody: body });
    // no state is kept, but the client's name is: carried back by the client in the session id (session.ts)
    if (isInitialize(body) && res.ok) res.headers.set('mcp-session-id', sessionIdOf(server.getClientVersion()));
    return res;
  } finally {
    // a JSON answer is whole once handleRequest resolves: nothing of this server is needed after it
    void server.close();
  }
}

/** The `/mcp`, `/healthz` and `/readyz` handler, for Bun.serve. */
export function createMcpHttp(o: McpHttpOptions) {
  const urls = { storefront: o.config.STOREFRONT_PUBLIC_URL, management: o.config.MANAGEMENT_PUBLIC_URL };
  const describer = o.describer ?? createKeyDescriber(urls);
  const origins = new Set(mcpAllowedOrigins(o.config));
  const readiness = gatewayReadiness(urls);

  async function mcp(req: Request, peer: Peer, toolsets: string[] | null): Promise<Response> {
    const origin = req.headers.get('origin');
    if (origin !== null && !origins.has(origin))
      return refusal(403, `Origin ${origin.slice(0, 200)} may not call this server (MCP_ALLOWED_ORIGINS)`);
    const apiKey = bearer(req);
    if (!apiKey) return unauthorized('An API key is required: send it as Authorization: Bearer <key>.');
    if (!surfaceOfKey(apiKey))
      return unauthorized('This is not a Studio API key (svc_sk_… or svc_pk_…).', 'invalid_token');
    if (req.method !== 'POST')
      return refusal(405, 'This server is stateless: POST JSON-RPC messages to /mcp.', { allow: 'POST' });
    const read = await jsonBodyOf(req);
    if (read instanceof Response) return read;
    const body = read.body;
    // the agent's address, after any it was sent through: the gateway reads it from the right while the hop is trusted
    const address = peer.requestIP(req)?.address;
    const forwarded = [req.headers.get('x-forwarded-for'), address].filter(Boolean).join(', ');
    return forwardingFor(forwarded, () => answer(req, apiKey, body, toolsets));
  }

  async function answer(req: Request, apiKey: string, body: unknown, toolsets: string[] | null): Promise<Response> {
    const described = await describer.describe(apiKey);
    if (!described.ok) {
      const e = described.error;
      if (e.status === 401) return unauthorized(e.detail ?? 'The API refused this key.', 'invalid_token');
      const retry = e.headers?.get('retry-after');
      return refusal(
        e.status ?? 502,
        e.detail ?? `The API could not be reached: ${e.message}`,
        retry ? { 'retry-after': retry } : {},
      );
    }
    return answerOnce(req, body, {
      apiKey,
      info: described.info,
      baseUrl: urls[surfaceOfKey(apiKey)!],
      toolsets,
      clientInfo: clientOfSession(req.headers.get('mcp-session-id')),
    });
  }

  return async function fetch(req: Request, peer: Peer): Promise<Response> {
    const target = requestTarget(req.url);
    if (!target.valid) return refusal(400, 'Malformed request target.');
    if (target.path === '/healthz') return jsonResponse({ status: 'ok' });
    if (target.path === '/readyz') return readiness();
    if (target.path !== '/mcp') return refusal(404, 'Not found: the MCP endpoint is /mcp.');
    const query = new URL(req.url).searchParams;
    return mcp(req, peer, parseToolsets(query.get('toolsets')));
  };
}

/**
 * `/readyz`: ready while the gateway answers its `/readyz` on both public URLs (the only thing this server needs),
 * asked at most once a second however often this is asked.
 */
function gatewayReadiness(urls: { storefront: string; management: string }) {
  let last: { at: number; answer: Promise<{ ready: boolean; checks: Record<string, string> }> } | null = null;
  const probe = async () => {
    const up = async (url: string) =>
      (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(900) }).then(
        (r) => r.ok,
        () => false,
      ))
        ? 'up'
        : 'down';
    const [storefront, management] = await Promise.all([up(urls.storefront), up(urls.management)]);
    return { ready: storefront === 'up' && management === 'up', checks: { storefront, management } };
  };
  return async (): Promise<Response> => {
    if (!last || Date.now() - last.at >= 1000) last = { at: Date.now(), answer: probe() };
    const { ready, checks } = await last.answer;
    return new Response(JSON.stringify({ status: ready ? 'ready' : 'unavailable', checks }), {
      status: ready ? 200 : 503,
      headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store' },
    });
  };
}
