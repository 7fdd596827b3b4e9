import type { RedisMode } from '../config';
import type { Sql } from './db';

/**
 * Who holds the gateway lock (docs/design/single-node.md; taken by `gateway/src/lock.ts`): read by every process that
 * must reach every gateway (a revoke from the dashboard or the CLI waits for each holder's confirmation).
 */
/** Two int4 keys: a key space apart from the idempotency locks' single bigint keys. */
export const GATEWAY_LOCK = '1398031684, 1';

/** How many gateways hold the lock in this database now: in single-node mode, the receivers of a broadcast (0 or 1). */
export async function gatewaysHolding(sql: Sql): Promise<number> {
  const [row] = await sql.unsafe<{ n: number }[]>(`
    select count(*)::int as n from pg_locks
    where locktype = 'advisory' and (classid, objid, objsubid) = (${GATEWAY_LOCK}, 2) and granted
      and database = (select oid from pg_database where datname = current_database())`);
  return row?.n ?? 0;
}

/**
 * The mode of the gateways running against this database, read from their lock (a single-node gateway holds it
 * exclusive, Redis-mode gateways shared), or null when none runs: the truth for a command that must reach them.
 */
export async function runningGatewayMode(sql: Sql): Promise<RedisMode | null> {
  const rows = await sql.unsafe<{ mode: string }[]>(`
    select mode from pg_locks
    where locktype = 'advisory' and (classid, objid, objsubid) = (${GATEWAY_LOCK}, 2) and granted
      and database = (select oid from pg_database where datname = current_database())
    limit 1`);
  const mode = rows[0]?.mode;
  return mode === 'ExclusiveLock' ? 'single-node' : mode === 'ShareLock' ? 'redis' : null;
}
