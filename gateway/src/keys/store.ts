import { AppError, generateKey, hashKey, iso, isoOrNull, isScope, type KeyKind, keyHint, newId } from '@studio/shared';
import type { Sql, Tx } from '@studio/shared/io/db';
import { parseOriginList } from '@studio/shared/origins';
import type { Broadcasts } from '../broadcasts/bus';

/** Key management used by the operator CLI and the dashboard. Never stores or logs the full key. */
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

export const keyRecordJson = (r: ApiKeyRow) => ({
  id: r.id,
  studioId: r.studioId,
  kind: r.kind,
  name: r.name,
  scopes: r.kind === 'secret' ? r.scopes : [],
  hint: r.hint,
  createdAt: iso(r.createdAt),
  lastUsedAt: isoOrNull(r.lastUsedAt),
  revokedAt: isoOrNull(r.revokedAt),
  expiresAt: isoOrNull(r.expiresAt),
  allowedOrigins: r.kind === 'publishable' ? r.allowedOrigins : null,
  rolledFrom: r.rolledFrom ?? null,
});
export type ApiKeyJson = ReturnType<typeof keyRecordJson>;

/** Origins for a key of this kind: null (any), a checked list (publishable keys), or an error. */
function checkedOrigins(kind: KeyKind, origins: string[] | null | undefined): string[] | null {
  if (!origins?.length) return null;
  if (kind !== 'publishable')
    throw new AppError('validation_failed', {
      detail: 'only publishable keys are restricted to origins (secret keys never run in a browser)',
    });
  const parsed = parseOriginList(origins);
  if ('error' in parsed) throw new AppError('validation_failed', { detail: parsed.error });
  return parsed.origins;
}

export async function createApiKey(
  sql: Sql | Tx,
  input: {
    studioId: string;
    kind: KeyKind;
    name: string;
    scopes?: string[];
    expiresAt?: Date | null;
    allowedOrigins?: string[] | null;
    rolledFrom?: string;
    /** The id, when the caller chose it (a dashboard form's: `onceId`); one that exists already is a 409 `conflict`. */
    id?: string;
  },
) {
  const scopes = [...new Set(input.scopes ?? [])];
  const bad = scopes.filter((s) => !isScope(s));
  if (bad.length) throw new AppError('validation_failed', { detail: `unknown scope ${bad.join(', ')}` });
  if (input.kind === 'publishable' && scopes.length)
    throw new AppError('validation_failed', { detail: 'publishable keys have no scopes' });
  const name = input.name.trim();
  if (!name || name.length > 100) throw new AppError('validation_failed', { detail: 'name must be 1..100 characters' });
  const allowedOrigins = checkedOrigins(input.kind, input.allowedOrigins);
  const [studio] = await sql`select id from studios where id = ${input.studioId} and deleted_at is null`;
  if (!studio) throw new AppError('not_found', { detail: `no studio ${input.studioId}` });
  const key = generateKey(input.kind);
  const id = input.id ?? newId('key');
  const [row] = await sql<ApiKeyRow[]>`
    insert into api_keys ${sql({ id, studioId: input.studioId, kind: input.kind, name, scopes: scopes.sort(), hash: hashKey(key), hint: keyHint(key), expiresAt: input.expiresAt ?? null, allowedOrigins, rolledFrom: input.rolledFrom ?? null })}
    on conflict (id) do nothing
    returning *`;
  if (!row) throw new AppError('conflict', { detail: `a key ${id} exists already` });
  return { key, record: keyRecordJson(row) };
}

/**
 * Revoke in Postgres (the source of truth), then evict the key from every gateway
 * replica and wait for their confirmation (`propagated`), over Redis or, in single-node
 * mode, Postgres (`bus`). `studioId` limits it to one studio (dashboard).
 */
export async function revokeApiKey(sql: Sql, bus: Broadcasts, keyId: string, studioId?: string) {
  const [row] = await sql<ApiKeyRow[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now())
    where id = ${keyId} ${studioId ? sql`and studio_id = ${studioId}` : sql``}
    returning *`;
  if (!row) throw new AppError('not_found', { detail: `no key ${keyId}` });
  const propagated = await bus.evictKeys([row.hash], { revoked: true });
  return { ...keyRecordJson(row), propagated };
}

/**
 * The key that replaced this one, if it was rolled: one replacement per key, ever (a second roll, a form sent
 * twice, a retried command, or after its replacement was revoked, would leave two keys of one lineage).
 */
export async function replacementOf(db: Sql | Tx, keyId: string, studioId?: string): Promise<string | null> {
  const [row] = await db<{ id: string }[]>`
    select id from api_keys where rolled_from = ${keyId} ${studioId ? db`and studio_id = ${studioId}` : db``} limit 1`;
  return row?.id ?? null;
}

/**
 * Roll a key (docs/design/keys.md): a new key with the same studio, kind, name and scopes, and the old
 * one's `expiresAt` set `expiresInMs` from now (0: now; an earlier expiry is kept). Every replica
 * drops its cached record of the old key before this returns, so the expiry holds at its instant.
 */
export async function rollApiKey(sql: Sql, bus: Broadcasts, keyId: string, expiresInMs: number, studioId?: string) {
  // one transaction: a roll either gives the new key and ends the old one, or does nothing
  const { old, next, previous } = await sql.begin(async (tx) => {
    const [old] = await tx<ApiKeyRow[]>`
      select * from api_keys where id = ${keyId} ${studioId ? tx`and studio_id = ${studioId}` : tx``}
        and revoked_at is null and (expires_at is null or expires_at > now()) for update`;
    if (!old) throw new AppError('not_found', { detail: `no live key ${keyId}` });
    // a fresh key is made with key:create
    const successor = await replacementOf(tx, keyId);
    if (successor)
      throw new AppError('conflict', {
        detail: `key ${keyId} was already rolled: its replacement is ${successor}; roll that one, or revoke the old key to end it now`,
      });
    const next = await createApiKey(tx, {
      studioId: old.studioId,
      kind: old.kind,
      name: old.name,
      scopes: old.scopes,
      allowedOrigins: old.allowedOrigins,
      rolledFrom: old.id,
    });
    const [previous] = await tx<ApiKeyRow[]>`
      update api_keys set expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => ${expiresInMs / 1000}))
      where id = ${keyId} returning *`;
    return { old, next, previous };
  });
  const propagated = await bus.evictKeys([old.hash], { revoked: false });
  return { ...next, previous: { id: previous!.id, expiresAt: iso(previous!.expiresAt!) }, propagated };
}

/**
 * Restrict a publishable key to these origins (an empty list: any origin again). Every
 * replica drops its cached record before this returns, so the change holds at once.
 */
export async function setKeyOrigins(sql: Sql, bus: Broadcasts, keyId: string, origins: string[], studioId?: string) {
  const [key] = await sql<
    ApiKeyRow[]
  >`select * from api_keys where id = ${keyId} ${studioId ? sql`and studio_id = ${studioId}` : sql``}`;
  if (!key) throw new AppError('not_found', { detail: `no key ${keyId}` });
  const allowedOrigins = checkedOrigins(key.kind, origins);
  const [row] = await sql<
    ApiKeyRow[]
  >`update api_keys set allowed_origins = ${allowedOrigins} where id = ${keyId} returning *`;
  const propagated = await bus.evictKeys([key.hash], { revoked: false });
  return { ...keyRecordJson(row!), propagated };
}

export async function listApiKeys(sql: Sql, studioId: string) {
  const rows = await sql<
    ApiKeyRow[]
  >`select * from api_keys where studio_id = ${studioId} order by created_at desc, id desc`;
  return rows.map(keyRecordJson);
}
