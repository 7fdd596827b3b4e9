import postgres from 'postgres';

export type Sql = postgres.Sql<{}>;
export type Tx = postgres.TransactionSql<{}>;

/** One client per process. Columns map snake_case <-> camelCase both ways. */
export function createSql(url: string, options: { max?: number; idleTimeout?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    idle_timeout: options.idleTimeout ?? 30,
    connect_timeout: 5,
    transform: postgres.camel,
    onnotice: () => {},
    connection: { application_name: process.env.SERVICE_NAME ?? 'studio-api' },
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
