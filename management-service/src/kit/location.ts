import { type Operation, operationsOf } from '@studio/shared';

/**
 * For each create (a 201 row of the registry), the path of the operation that reads what it
 * created: the GET whose answer is the same record schema, its last `{…Id}` the new id
 * (`POST /v1/members/invites` -> `/v1/members/{membershipId}`). Built once from the registry,
 * so no handler spells a `Location` by hand; a create without such a GET fails at start.
 */
const readPaths = new Map<string, { path: string; idParam: string }>();
for (const create of operationsOf('management').filter((o) => o.ok.status === 201)) {
  const reads = operationsOf('management').filter((o) => o.method === 'GET' && o.ok.schema === create.ok.schema);
  const idParam = reads.length === 1 ? /\{(\w+)\}$/.exec(reads[0]!.path)?.[1] : undefined;
  if (!idParam) throw new Error(`location: no single GET answers the record ${create.id} creates`);
  readPaths.set(create.id, { path: reads[0]!.path, idParam });
}

/** The `Location` of a record `create` made: its read path, with the request's path ids and the new id. */
export function locationOf(create: Operation, params: Record<string, string>, id: string): string {
  const read = readPaths.get(create.id);
  if (!read) throw new Error(`location: ${create.id} does not create a record`);
  return read.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === read.idParam ? id : params[name]!));
}
