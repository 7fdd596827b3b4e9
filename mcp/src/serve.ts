import type { Config } from '@studio/shared';
import { SERVE_DEFAULTS, withNosniff } from '@studio/shared/io';
import { createMcpHttp, type McpHttpOptions } from './http';

/** The MCP server on Bun.serve, with every server's defaults (no development mode, our error answer). */
export function serveMcp(
  config: McpHttpOptions['config'] & Pick<Config, 'HOST'>,
  o: { hostname: string; port: number; describer?: McpHttpOptions['describer'] },
) {
  const handle = createMcpHttp({ config, describer: o.describer });
  const server = Bun.serve({
    ...SERVE_DEFAULTS,
    hostname: o.hostname,
    port: o.port,
    fetch: async (req, srv) => withNosniff(await handle(req, srv)),
  });
  return { server, url: server.url.href.replace(/\/$/, ''), stop: () => server.stop(true) };
}
