import type { Caller } from '@studio/shared';
import type { Sql, Tx } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';
import type { Config } from '@studio/shared';

/** What a write action returns; the kit turns it into the HTTP response (and stores it for replay). */
export interface WriteResult {
  status: number;
  body: unknown;
  /** Sent as the `Location` header (successful creates). */
  location?: string;
}

export interface WriteDeps {
  config: Config;
  sql: Sql;
  redis: Redis | null;
}

/**
 * Runs a Management write (POST/PATCH/DELETE) under the idempotency rules of contract §5.
 * `action` runs inside one Postgres transaction; throw AppError (or let a constraint
 * violation escape) to fail it. Usage in a route:
 *
 *   .post('/v1/plans', ({ caller, request, body }) =>
 *     runWrite(deps, caller, request, body, (tx) => createPlan(tx, caller.studioId, body)),
 *     { body: CreatePlanBody })
 *
 * PLACEHOLDER: this version only runs the action in a transaction. The idempotency
 * implementation (issue 4) replaces the body of this function, not its signature.
 */
export async function runWrite(deps: WriteDeps, caller: Caller, request: Request, _body: unknown, action: (tx: Tx) => Promise<WriteResult>): Promise<Response> {
  void caller; void request;
  const result = await deps.sql.begin((tx) => action(tx));
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (result.location) headers.location = result.location;
  return new Response(JSON.stringify(result.body), { status: result.status, headers });
}
