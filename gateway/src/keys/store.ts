import type { Sql } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';
import { AppError, generateKey, hashKey, isScope, keyHint, newId, isoOrNull, iso, type KeyKind } from '@studio/shared';
import { REVOKED_MARKER_TTL_S, redisNames } from './channels';

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
});
export type ApiKeyJson = ReturnType<typeof keyRecordJson>;

export async function createApiKey(sql: Sql, input: { studioId: string; kind: KeyKind; name: string; scopes?: string[] }) {
  const scopes = [...new Set(input.scopes ?? [])];
  const bad = scopes.filter((s) => !isScope(s));
  if (bad.length) throw new AppError('validation_failed', { detail: `unknown scope ${bad.join(', ')}` });
  if (input.kind === 'publishable' && scopes.length) throw new AppError('validation_failed', { detail: 'publishable keys have no scopes' });
  const name = input.name.trim();
  if (!name || name.length > 100) throw new AppError('validation_failed', { detail: 'name must be 1..100 characters' });
  const [studio] = await sql`select id from studios where id = ${input.studioId} and deleted_at is null`;
  if (!studio) throw new AppError('not_found', { detail: `no studio ${input.studioId}` });
  const key = generateKey(input.kind);
  const [row] = await sql<ApiKeyRow[]>`
    insert into api_keys ${sql({ id: newId('key'), studioId: input.studioId, kind: input.kind, name, scopes: scopes.sort(), hash: hashKey(key), hint: keyHint(key) })}
    returning *`;
  return { key, record: keyRecordJson(row!) };
}

/**
 * Revoke in Postgres (the source of truth), then tell every gateway replica: a
 * revoked marker checked on every request, the cached record dropped, and a
 * broadcast that evicts in-process caches. `studioId` limits it to one studio (dashboard).
 */
export async function revokeApiKey(sql: Sql, redis: Redis | null, prefix: string, keyId: string, studioId?: string) {
  const [row] = await sql<ApiKeyRow[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now())
    where id = ${keyId} ${studioId ? sql`and studio_id = ${studioId}` : sql``}
    returning *`;
  if (!row) throw new AppError('not_found', { detail: `no key ${keyId}` });
  await broadcastRevocation(redis, prefix, row.hash);
  return keyRecordJson(row);
}

export async function broadcastRevocation(redis: Redis | null, prefix: string, hash: string) {
  const n = redisNames(prefix);
  if (!redis?.isReady) return false;
  try {
    await redis.multi()
      .set(n.revoked(hash), '1', { EX: REVOKED_MARKER_TTL_S })
      .del(n.record(hash))
      .publish(n.revokedChannel, hash)
      .exec();
    return true;
  } catch {
    return false;
  }
}

/** Drop cached records (Redis and every replica's memory) so the next request re-reads Postgres. */
export async function evictKeyRecords(redis: Redis | null, prefix: string, hashes: string[]) {
  const n = redisNames(prefix);
  if (!redis?.isReady || !hashes.length) return false;
  try {
    const m = redis.multi().del(hashes.map(n.record));
    for (const h of hashes) m.publish(n.revokedChannel, h);
    await m.exec();
    return true;
  } catch {
    return false;
  }
}

export async function listApiKeys(sql: Sql, studioId: string) {
  const rows = await sql<ApiKeyRow[]>`select * from api_keys where studio_id = ${studioId} order by created_at desc, id desc`;
  return rows.map(keyRecordJson);
}
