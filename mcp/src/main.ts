/**
 * The MCP server's HTTP process (`bun run start` starts it; compose's `mcp`): Streamable HTTP at
 * `http://<HOST>:<MCP_PORT>/mcp`, `/healthz` and `/readyz` beside it (docs/design/mcp.md). SIGTERM: no new
 * connections, in-flight calls finish (at most 10 s).
 */
import { ConfigError, loadMcpConfig, log } from '@studio/shared';
import { listenOrExit } from '@studio/shared/io';
import { serveMcp } from './serve';

let config: ReturnType<typeof loadMcpConfig>;
try {
  config = loadMcpConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`error: ${err.message}`);
  process.exit(1);
}
const served = listenOrExit('MCP_PORT', config.MCP_PORT, () =>
  serveMcp(config, { hostname: config.HOST, port: config.MCP_PORT }),
);
log('info', 'mcp server listening', { url: `${served.url}/mcp` });
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.on(signal, async () => {
    await Promise.race([served.server.stop(false), Bun.sleep(10_000)]);
    process.exit(0);
  });
