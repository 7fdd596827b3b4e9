import postgres from 'postgres';

// biome-ignore lint/complexity/noBannedTypes: postgres.js spells "no custom column types" as {}
export type Sql = postgres.Sql<{}>;
// biome-ignore lint/complexity/noBannedTypes: as above
export type Tx = postgres.TransactionSql<{}>;
/** The plain client or a transaction: what a query function takes. */
export type Db = Sql | Tx;

export interface SqlOptions {
  max?: number;
  idleTimeout?: number;
  /** The connection's application_name, so `pg_stat_activity` shows which process holds it. */
  name?: string;
  /**
   * Commits without waiting for the WAL to reach disk (`synchronous_commit = off` for the
   * connection's session): for a log whose last moment a crash may lose anyway (the gateway's
   * activity writer), never for the API's own writes.
   */
  asyncCommit?: boolean;
}

/** One client per process (the gateway's activity writer has one more). Columns map snake_case <-> camelCase both ways. */
export function createSql(url: string, options: SqlOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    idle_timeout: options.idleTimeout ?? 30,
    // a database that does not accept a connection within 2 s is down for our callers: answer 503, not wait
    // (a stopped one refuses at once: 503 within a fraction of a second)
    connect_timeout: 2,
    // postgres.js waits 3^n/100 s (up to 20 s) before reconnecting, and a query that arrives meanwhile
    // waits with it: a short, capped delay lets every request hear 503 at once and the first after a
    // restart succeed (patches/postgres@3.4.9.patch fixes what a delay cannot: a crash, stuck first queries
    // and a connection that never flushed its startup message after an outage)
    backoff: (retries: number) => Math.min(0.05 * retries, 0.2),
    transform: postgres.camel,
    onnotice: () => {},
    connection: {
      application_name: options.name ?? 'studio-api',
      ...(options.asyncCommit && { synchronous_commit: 'off' }),
    },
  }) as Sql;
}

export async function pingSql(sql: Sql): Promise<boolean> {
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  }
}
