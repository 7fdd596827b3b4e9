import type { Operation } from './operations';

const VERBS: Record<string, string> = {
  List: 'list',
  Get: 'retrieve',
  Create: 'create',
  Update: 'update',
  Delete: 'delete',
};

/**
 * Where an operation lives on the clients we ship (docs/design/sdk.md, docs/design/mcp.md): its resource path
 * (`locations.rooms`, from the path's words) and its method (`list`, `retrieve`, `create`, `update`, `delete`, or the
 * operation's own verb: `cancel`, `archive`, `invite`, `reschedule`, `reset`). The SDK's `studio.locations.rooms.create`
 * and the MCP server's `locations_rooms_create` are this one name.
 */
export function methodOf(o: Operation): { resource: string[]; name: string } {
  const words = o.path.split('/').filter((w) => w && w !== 'v1' && !w.startsWith('{'));
  const verb = /^(?:storefront|management)([A-Z][a-z]+)/.exec(o.id)?.[1];
  if (!verb) throw new Error(`methodOf: no verb in ${o.id}`);
  // an action's path ends with its verb (`/v1/members/{membershipId}/cancel`, `/v1/members/invites`,
  // `/v1/sandbox/reset`): the verb names the method, not a resource
  const last = words.at(-1)!;
  const resource = words.length > 1 && last.startsWith(verb.toLowerCase()) ? words.slice(0, -1) : words;
  return { resource, name: VERBS[verb] ?? verb.toLowerCase() };
}
