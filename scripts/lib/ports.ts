/**
 * A port the OS says is free now. Random picks collide with the ephemeral range that
 * outgoing connections use (32768-60999 on Linux), so ask instead.
 */
export async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** `n` distinct free ports. */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** One stack's ports: the gateway's two public ones and its operations port, the dashboard's two, the two services', the MCP server's. */
export interface StackPorts {
  storefront: number;
  management: number;
  dashboard: number;
  ops: number;
  dashboardOps: number;
  storefrontService: number;
  managementService: number;
  mcp: number;
}

/**
 * Free ports for one stack, and the environment that gives them to `bun run start` or to each process; with
 * `urls`, also the services' and the public URLs on 127.0.0.1 (left out, `bun run start` derives them from the ports).
 */
export async function stackPorts(urls = false): Promise<{ port: StackPorts; env: Record<string, string> }> {
  const p = await freePorts(8);
  const port: StackPorts = {
    storefront: p[0]!,
    management: p[1]!,
    dashboard: p[2]!,
    ops: p[3]!,
    storefrontService: p[4]!,
    managementService: p[5]!,
    dashboardOps: p[6]!,
    mcp: p[7]!,
  };
  const { storefront, management, dashboard, ops, dashboardOps, storefrontService, managementService } = port;
  const at = (n: number) => `http://127.0.0.1:${n}`;
  const env: Record<string, string> = {
    STOREFRONT_PORT: String(storefront),
    MANAGEMENT_PORT: String(management),
    DASHBOARD_PORT: String(dashboard),
    OPS_PORT: String(ops),
    DASHBOARD_OPS_PORT: String(dashboardOps),
    STOREFRONT_SERVICE_PORT: String(storefrontService),
    MANAGEMENT_SERVICE_PORT: String(managementService),
    MCP_PORT: String(port.mcp),
  };
  if (urls)
    Object.assign(env, {
      STOREFRONT_SERVICE_URL: at(storefrontService),
      MANAGEMENT_SERVICE_URL: at(managementService),
      STOREFRONT_PUBLIC_URL: at(storefront),
      MANAGEMENT_PUBLIC_URL: at(management),
      DASHBOARD_PUBLIC_URL: at(dashboard),
    });
  return { port, env };
}
