import type { KeyKind } from '@studio/shared';
import type { Db, Sql, Tx } from '@studio/shared/io';

/** The SQL of key administration (`service.ts` holds the rules); `studioId`, when given, limits a statement to one studio (dashboard). */
export interface ApiKeyRow {
  id: string;
  studioId: string;
  kind: KeyKind;
  name: string;
  scopes: string[];
  hint: string;
  hash: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
  allowedOrigins: string[] | null;
  /** The key this one replaced, when a roll made it. */
  rolledFrom: string | null;
}

/** A live key: neither revoked nor past its expiry. */
export interface LiveKey {
  id: string;
  name: string;
  kind: KeyKind;
  allowedOrigins: string[] | null;
}

const inStudio = (db: Db, studioId?: string) => (studioId ? db`and studio_id = ${studioId}` : db``);

/** A live (not deleted) studio's mode: `test` for a sandbox (its keys are test keys), or null when there is none. */
export async function studioMode(db: Db, studioId: string): Promise<'live' | 'test' | null> {
  const [studio] = await db<{ sandbox: boolean }[]>`
    select live_studio_id is not null as sandbox from studios where id = ${studioId} and deleted_at is null`;
  return studio ? (studio.sandbox ? 'test' : 'live') : null;
}

/** The new key's row, or undefined when a key with its id exists already. */
export async function insertKey(
  db: Db,
  row: Pick<
    ApiKeyRow,
    'id' | 'studioId' | 'kind' | 'name' | 'scopes' | 'hash' | 'hint' | 'expiresAt' | 'allowedOrigins'
  > & {
    rolledFrom: string | null;
  },
): Promise<ApiKeyRow | undefined> {
  const [made] = await db<ApiKeyRow[]>`insert into api_keys ${db(row)} on conflict (id) do nothing returning *`;
  return made;
}

export async function markRevoked(sql: Sql, keyId: string, studioId?: string): Promise<ApiKeyRow | undefined> {
  const [row] = await sql<ApiKeyRow[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now())
    where id = ${keyId} ${inStudio(sql, studioId)}
    returning *`;
  return row;
}

export async function replacementOf(db: Db, keyId: string, studioId?: string): Promise<string | null> {
  const [row] = await db<{ id: string }[]>`
    select id from api_keys where rolled_from = ${keyId} ${inStudio(db, studioId)} limit 1`;
  return row?.id ?? null;
}

/** The live key, locked for a roll. */
export async function liveKeyForUpdate(tx: Tx, keyId: string, studioId?: string): Promise<ApiKeyRow | undefined> {
  const [old] = await tx<ApiKeyRow[]>`
    select * from api_keys where id = ${keyId} ${inStudio(tx, studioId)}
      and revoked_at is null and (expires_at is null or expires_at > now()) for update`;
  return old;
}

/** Sets the key's expiry `inMs` from now, unless it ends earlier already. */
export async function expireWithin(tx: Tx, keyId: string, inMs: number): Promise<ApiKeyRow | undefined> {
  const [row] = await tx<ApiKeyRow[]>`
    update api_keys set expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => ${inMs / 1000}))
    where id = ${keyId} returning *`;
  return row;
}

export async function keyById(sql: Sql, keyId: string, studioId?: string): Promise<ApiKeyRow | undefined> {
  const [key] = await sql<ApiKeyRow[]>`select * from api_keys where id = ${keyId} ${inStudio(sql, studioId)}`;
  return key;
}

export async function updateOrigins(sql: Sql, keyId: string, origins: string[] | null): Promise<ApiKeyRow | undefined> {
  const [row] = await sql<
    ApiKeyRow[]
  >`update api_keys set allowed_origins = ${origins} where id = ${keyId} returning *`;
  return row;
}

export async function updateName(sql: Sql, studioId: string, keyId: string, name: string): Promise<boolean> {
  const done = await sql`update api_keys set name = ${name} where studio_id = ${studioId} and id = ${keyId}`;
  return done.count > 0;
}

export const keysOf = (sql: Sql, studioId: string) =>
  sql<ApiKeyRow[]>`select * from api_keys where studio_id = ${studioId} order by created_at desc, id desc`;

export async function liveKey(sql: Sql, studioId: string, keyId: string): Promise<LiveKey | null> {
  const [key] = await sql<LiveKey[]>`
    select id, name, kind, allowed_origins from api_keys
    where studio_id = ${studioId} and id = ${keyId} and revoked_at is null and (expires_at is null or expires_at > now())`;
  return key ?? null;
}

export async function revokedKeyName(sql: Sql, studioId: string, keyId: string): Promise<string | null> {
  const [key] = await sql<
    { name: string }[]
  >`select name from api_keys where studio_id = ${studioId} and id = ${keyId} and revoked_at is not null`;
  return key?.name ?? null;
}
