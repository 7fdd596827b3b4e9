import postgres from 'postgres';

export type Sql = postgres.Sql<{}>;
export type Tx = postgres.TransactionSql<{}>;

/** One client per process. Columns map snake_case <-> camelCase both ways. */
/** `name` is the connection's application_name, so `pg_stat_activity` shows which process holds it. */
export function createSql(url: string, options: { max?: number; idleTimeout?: number; name?: string } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    idle_timeout: options.idleTimeout ?? 30,
    connect_timeout: 5,
    transform: postgres.camel,
    onnotice: () => {},
    connection: { application_name: options.name ?? 'studio-api' },
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
