#!/usr/bin/env bun
/**
 * `studio-mcp` (`bunx studio-mcp`): the MCP server over stdio, for desktop clients (docs/mcp.md). The key is
 * STUDIO_API_KEY; MCP_TOOLSETS narrows the tools; STOREFRONT_PUBLIC_URL and MANAGEMENT_PUBLIC_URL say where the API
 * is. Nothing but JSON-RPC goes to stdout: what this says goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError, loadMcpConfig } from '@studio/shared';
import { createKeyDescriber } from './keys';
import { createSessionServer, parseToolsets, surfaceOfKey } from './server';

function fail(message: string): never {
  console.error(`studio-mcp: ${message}`);
  process.exit(1);
}

let config: ReturnType<typeof loadMcpConfig>;
try {
  config = loadMcpConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(err.message);
  throw err;
}
const apiKey = config.STUDIO_API_KEY;
const surface = surfaceOfKey(apiKey);
if (!surface) fail('set STUDIO_API_KEY to a Studio API key (svc_sk_… for Management, svc_pk_… for the Storefront)');
const urls = { storefront: config.STOREFRONT_PUBLIC_URL, management: config.MANAGEMENT_PUBLIC_URL };
const described = await createKeyDescriber(urls).describe(apiKey);
if (!described.ok)
  fail(
    `the API at ${urls[surface]} refused the key: ${described.error.status ?? ''} ${described.error.message}`.trim(),
  );
const server = createSessionServer({
  apiKey,
  info: described.info,
  baseUrl: urls[surface],
  toolsets: parseToolsets(config.MCP_TOOLSETS),
});
await server.connect(new StdioServerTransport());
console.error(
  `studio-mcp: serving the ${surface} tools of key ${described.info.name} (${described.info.mode}) over stdio`,
);
