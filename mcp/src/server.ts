/**
 * One MCP server for one key (docs/design/mcp.md): the tools its scopes allow (narrowed to the toolsets asked for),
 * instructions that say what the key is (test mode included), and each call made through the SDK with that key,
 * naming the MCP client in the User-Agent the activity log shows.
 */

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { type Operation, type Surface, scopeAllows } from '@studio/shared';
import { callTool } from './call';
import { clientFor } from './clients';
import { type Tool, toolsOf } from './tools';
import { MCP_VERSION } from './version';

/** What `GET /v1/key` says of the key (the fields the server uses). */
export interface KeyInfo {
  id: string;
  name: string;
  kind: 'publishable' | 'secret';
  mode: 'live' | 'test';
  studio: { id: string; name: string };
  sandbox: { name: string; liveStudioId: string } | null;
  scopes: string[];
}

export const surfaceOfKey = (apiKey: string): Surface | null =>
  apiKey.startsWith('svc_pk_') ? 'storefront' : apiKey.startsWith('svc_sk_') ? 'management' : null;

/** The key introspection tool: every key sees it, whatever its scopes or the toolsets asked for. */
const KEY_TOOL = 'key_retrieve';

const allows = (o: Operation, info: KeyInfo) =>
  o.surface === 'storefront' || o.scope === null || scopeAllows(info.scopes, o.scope);

/** The tools a key sees: its surface's, those its scopes allow, of the toolsets asked for (all when none). */
export function visibleTools(surface: Surface, info: KeyInfo, toolsets: readonly string[] | null): Tool[] {
  return toolsOf(surface).filter(
    (t) =>
      allows(t.operation, info) &&
      (!t.operation.testOnly || info.mode === 'test') &&
      (t.name === KEY_TOOL || !toolsets?.length || toolsets.includes(t.toolset)),
  );
}

/** `?toolsets=classes,schedule` or MCP_TOOLSETS as a list; null: every toolset. */
export const parseToolsets = (s: string | null | undefined): string[] | null =>
  s
    ? s
        .split(',')
        .map((w) => w.trim())
        .filter(Boolean)
    : null;

export function instructionsOf(info: KeyInfo, surface: Surface): string {
  const who = `You are connected to the Studio API (a class studio's platform) with the ${info.kind} key "${info.name}" of the studio "${info.studio.name}" (${info.studio.id}).`;
  const mode =
    info.mode === 'test'
      ? ` TEST MODE: every call works on the sandbox "${info.sandbox?.name ?? 'default'}", a copy kept apart from the live studio; nothing you do here reaches live data, and sandbox_reset puts the sandbox back to its seed.`
      : ' LIVE MODE: writes change the real studio that its members see; confirm with the user before cancelling, deleting or archiving anything.';
  const what =
    surface === 'storefront'
      ? ' This key reads the public Storefront only (classes, instructors, plans, policies, the site): nothing can be changed with it.'
      : ` The tools listed are the ones this key's scopes allow (${info.scopes.join(', ') || 'none'}); call key_retrieve to see the key again.`;
  return `${who}${mode}${what} Lists return one page and next_cursor; pass it as cursor to read on. Ids look like cls_…, occ_…, ins_…: take them from a list, never guess them. Times are RFC 3339 instants in UTC (2027-03-02T18:00:00Z).`;
}

export interface SessionOptions {
  apiKey: string;
  info: KeyInfo;
  /** The surface's public URL (STOREFRONT_PUBLIC_URL or MANAGEMENT_PUBLIC_URL). */
  baseUrl: string;
  toolsets: readonly string[] | null;
  /** The MCP client, when known before `initialize` reaches this server (over stateless HTTP, from the session id). */
  clientInfo?: { name: string; version?: string } | null;
}

/** A client's name as a User-Agent product token: no spaces or separators, at most 64 characters. */
const token = (s: string) => s.replace(/[^A-Za-z0-9!#$%&'*+.^_`|~-]+/g, '-').slice(0, 64) || 'unknown';

/** The SDK's `appInfo`: `studio-mcp/0.1.0` and the MCP client, so the User-Agent reads `… studio-mcp/0.1.0 claude-ai/1.0`. */
export function appInfoOf(client: { name: string; version?: string } | null | undefined) {
  if (!client?.name) return { name: 'studio-mcp', version: MCP_VERSION };
  return {
    name: `studio-mcp/${MCP_VERSION} ${token(client.name)}`,
    ...(client.version ? { version: token(client.version) } : {}),
  };
}

/**
 * One validator for every server of the process: a `Server` otherwise builds its own Ajv (formats and all), which was
 * most of a stateless request's cost (about 0.2 ms of 0.3; `bun run bench mcp`). Only elicitation uses it.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

export function createSessionServer(o: SessionOptions): Server {
  const surface = surfaceOfKey(o.apiKey)!;
  const tools = visibleTools(surface, o.info, o.toolsets);
  const byName = new Map(tools.map((t) => [t.name, t]));
  // advanced use, as the SDK's documentation says: our schemas are JSON Schema from the registry (McpServer takes zod)
  const server = new Server(
    { name: 'studio-api', title: 'Studio API', version: MCP_VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: instructionsOf(o.info, surface),
      jsonSchemaValidator: VALIDATOR,
    },
  );
  const client = () =>
    clientFor({
      apiKey: o.apiKey,
      baseUrl: o.baseUrl,
      surface,
      appInfo: appInfoOf(o.clientInfo ?? server.getClientVersion()),
    });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: { title: t.title, ...t.annotations },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    const tool = byName.get(req.params.name);
    if (!tool)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${req.params.name} (this key's tools are: ${tools.map((t) => t.name).join(', ')})`,
      );
    return callTool(tool, req.params.arguments ?? {}, { studio: client(), apiKey: o.apiKey, signal: extra.signal });
  });
  return server;
}
