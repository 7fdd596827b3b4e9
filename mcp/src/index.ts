/**
 * `@studio/mcp`: the MCP server, a client of the Studio API (docs/design/mcp.md). `serveMcp` serves Streamable HTTP;
 * the `studio-mcp` bin (src/stdio.ts) serves stdio; `toolsOf` is the catalog, one tool per operation.
 */
export { derivedKey } from './call';
export { createMcpHttp } from './http';
export { createKeyDescriber } from './keys';
export { serveMcp } from './serve';
export { appInfoOf, createSessionServer, instructionsOf, visibleTools } from './server';
export { type Tool, toolsOf } from './tools';
export { MCP_VERSION } from './version';
