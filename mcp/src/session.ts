/**
 * The MCP client's name across a stateless server's requests (docs/design/mcp.md): `initialize` is the only message
 * that names the client, and every later request reaches a new server. So the answer to `initialize` gives a session
 * id that carries the name (`c1.<base64url JSON [name, version]>.<random>`), which the client sends back on every
 * request, as the transport asks; nothing is stored. The name only labels the User-Agent the activity log shows, which
 * a client can set as it likes anyway: it is not a credential, and is not signed.
 */
const MAX = 64;

export function sessionIdOf(client: { name?: string; version?: string } | undefined): string {
  const named = client?.name ? [client.name.slice(0, MAX), (client.version ?? '').slice(0, MAX)] : [];
  const random = crypto.randomUUID().replaceAll('-', '');
  return `c1.${Buffer.from(JSON.stringify(named)).toString('base64url')}.${random}`;
}

export function clientOfSession(id: string | null): { name: string; version?: string } | null {
  const m = id && /^c1\.([A-Za-z0-9_-]{0,400})\.[0-9a-f]{32}$/.exec(id);
  if (!m) return null;
  try {
    const [name, version] = JSON.parse(Buffer.from(m[1]!, 'base64url').toString()) as unknown[];
    if (typeof name !== 'string' || !name || name.length > MAX) return null;
    return typeof version === 'string' && version && version.length <= MAX ? { name, version } : { name };
  } catch {
    return null;
  }
}
