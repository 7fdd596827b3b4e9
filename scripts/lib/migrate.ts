import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';

export const MIGRATIONS_DIR = join(import.meta.dir, '../../migrations');

/** Create the database named by `url` when it does not exist yet (a fresh machine has none). */
export async function ensureDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  if (!name) return;
  u.pathname = '/postgres';
  const admin = postgres(u.href, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const [row] = await admin`select 1 from pg_database where datname = ${name}`;
    if (!row)
      await admin.unsafe(`create database "${name.replaceAll('"', '""')}"`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created meanwhile by a concurrent runner
      });
  } finally {
    await admin.end();
  }
}

/**
 * A migration whose first line is this runs outside a transaction, one statement at a time,
 * so that it can build and drop indexes `concurrently`: on a table written at request rate
 * (the activity log) a plain index build would hold back every write until it is done. Each
 * statement must be safe to run again (`if not exists`, `if exists`): if one fails, the
 * next run starts the file from the top. A concurrent build that fails leaves its index
 * behind, invalid, which `if not exists` would then skip forever: before a
 * `create index concurrently if not exists`, the runner drops an invalid index of that name
 * (dropInvalidIndex).
 */
export const NO_TRANSACTION = '-- migrate: no transaction';

/** A file's statements: each ends with `;` at the end of a line (no dollar-quoted bodies in such files). */
export function statementsOf(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    const code = line.replace(/--.*$/, '').trimEnd();
    current += `${line}\n`;
    if (code.endsWith(';')) {
      out.push(current.trim());
      current = '';
    }
  }
  if (current.replace(/--.*$/gm, '').trim())
    throw new Error(`a statement does not end with ";": ${current.trim().slice(0, 80)}`);
  return out;
}

const IDENT = '(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'; // a plain or a double-quoted identifier
const CREATE_INDEX_IF_NOT_EXISTS = new RegExp(
  String.raw`^create\s+(?:unique\s+)?index\s+concurrently\s+if\s+not\s+exists\s+(${IDENT})\s+on\s+(?:only\s+)?(${IDENT}(?:\.${IDENT})?)`,
  'i',
);

/**
 * Before a NO_TRANSACTION statement `create [unique] index concurrently if not exists <name> on <table>`:
 * drop the index of that name if it is invalid. A concurrent build that fails part-way (a
 * lock_timeout, a cancel, a unique violation) leaves its index behind with `indisvalid` false;
 * `if not exists` would then skip the statement on every later run, and the index would stay,
 * never read by a query yet kept up by writes. Dropped, the statement builds it afresh.
 * Handled: the name plain (folded to lower case) or double-quoted; Postgres refuses a schema
 * there, the index lives in its table's schema, so the table (plain, quoted, schema-qualified,
 * resolved on the search_path by to_regclass) says where to look. Other statements pass.
 */
async function dropInvalidIndex(sql: postgres.Sql, statement: string): Promise<void> {
  const m = CREATE_INDEX_IF_NOT_EXISTS.exec(statement.replace(/--.*$/gm, '').trim());
  if (!m) return;
  const name = m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replaceAll('""', '"') : m[1]!.toLowerCase();
  const [invalid] = await sql<{ qualified: string }[]>`
    select format('%I.%I', n.nspname, c.relname) as qualified
    from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
    where c.relname = ${name} and not i.indisvalid
      and c.relnamespace = (select t.relnamespace from pg_class t where t.oid = to_regclass(${m[2]!}))`;
  if (invalid) await sql.unsafe(`drop index concurrently if exists ${invalid.qualified}`);
}

/** Apply forward-only numbered migrations, each in its own transaction (or statement by statement: NO_TRANSACTION), under an advisory lock. */
export async function migrate(url: string, dir = MIGRATIONS_DIR): Promise<string[]> {
  await ensureDatabase(url);
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  const applied: string[] = [];
  try {
    await sql`select pg_advisory_lock(727274)`;
    await sql`create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
    const done = new Set(
      (await sql<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version),
    );
    const files = (await readdir(dir)).filter((f) => /^\d{5}_.+\.sql$/.test(f)).sort();
    for (const file of files) {
      if (done.has(file)) continue;
      const text = await Bun.file(join(dir, file)).text();
      if (text.startsWith(NO_TRANSACTION)) {
        for (const statement of statementsOf(text)) {
          await dropInvalidIndex(sql, statement);
          await sql.unsafe(statement);
        }
        await sql`insert into schema_migrations (version) values (${file})`;
      } else {
        await sql.begin(async (tx) => {
          await tx.unsafe(text);
          await tx`insert into schema_migrations (version) values (${file})`;
        });
      }
      applied.push(file);
    }
    await sql`select pg_advisory_unlock(727274)`;
  } finally {
    await sql.end();
  }
  return applied;
}
