import type { Db, Sql, Tx } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';

/** Idempotency records (contract §5): Postgres is the truth, Redis the lock and the hot copy. */
export const RETENTION_S = 24 * 60 * 60;
/** How long an in-flight lock lives if its holder dies without releasing it. */
export const LOCK_TTL_MS = 30_000;
export const MAX_KEY_LENGTH = 255;

/** A key's record: the request's fingerprint and the answer it got. */
export interface StoredResponse {
  fingerprint: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}
/** A record read back from Postgres, with the seconds it has left. */
export type LiveRecord = StoredResponse & { ttlS: number };

/** JSON with object keys sorted at every depth, so key order and whitespace never matter. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

export function fingerprintOf(method: string, path: string, body: unknown): string {
  return new Bun.CryptoHasher('sha256').update(`${method.toUpperCase()}\n${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

const names = (prefix: string, studioId: string, key: string) => {
  const id = new Bun.CryptoHasher('sha256').update(`${studioId}\n${key}`).digest('hex').slice(0, 40);
  return { record: `${prefix}idem:rec:${id}`, lock: `${prefix}idem:lock:${id}` };
};

type RedisOrNull = Redis | null;
const usable = (r: RedisOrNull): r is Redis => !!r?.isReady;

export async function cachedRecord(redis: RedisOrNull, prefix: string, studioId: string, key: string): Promise<StoredResponse | null> {
  if (!usable(redis)) return null;
  try {
    const raw = await redis.get(names(prefix, studioId, key).record);
    return raw ? (JSON.parse(raw) as StoredResponse) : null;
  } catch {
    return null;
  }
}

export async function cacheRecord(redis: RedisOrNull, prefix: string, studioId: string, key: string, rec: StoredResponse, ttlS = RETENTION_S) {
  if (!usable(redis) || ttlS <= 0) return;
  try {
    await redis.set(names(prefix, studioId, key).record, JSON.stringify(rec), { EX: Math.ceil(ttlS) });
  } catch {
    /* the hot copy is only a cache of the Postgres record */
  }
}

/** 'held' when we took the lock, 'busy' when another request holds it, 'none' when Redis is unavailable. */
export async function takeLock(redis: RedisOrNull, prefix: string, studioId: string, key: string, token: string): Promise<'held' | 'busy' | 'none'> {
  if (!usable(redis)) return 'none';
  try {
    const ok = await redis.set(names(prefix, studioId, key).lock, token, { NX: true, PX: LOCK_TTL_MS });
    return ok === 'OK' ? 'held' : 'busy';
  } catch {
    return 'none';
  }
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export async function releaseLock(redis: RedisOrNull, prefix: string, studioId: string, key: string, token: string) {
  if (!usable(redis)) return;
  try {
    await redis.eval(RELEASE, { keys: [names(prefix, studioId, key).lock], arguments: [token] });
  } catch {
    /* it expires on its own */
  }
}

/** The live (unexpired) record of a key, with its remaining lifetime. */
export async function findRecord(sql: Db, studioId: string, key: string): Promise<LiveRecord | null> {
  const [row] = await sql<LiveRecord[]>`
    select fingerprint, status, headers, body, extract(epoch from expires_at - now())::float8 as ttl_s
    from idempotency_records where studio_id = ${studioId} and key = ${key} and expires_at > now()`;
  return row ?? null;
}

/**
 * Serialises requests of one key inside Postgres, so correctness never depends on
 * Redis: false when another transaction holds it (that request is in flight).
 */
export async function tryKeyLock(tx: Tx, studioId: string, key: string): Promise<boolean> {
  const [row] = await tx<{ ok: boolean }[]>`select pg_try_advisory_xact_lock(hashtextextended(${`idem\n${studioId}\n${key}`}, 0)) as ok`;
  return !!row?.ok;
}

/** Stores a response; an expired record of the same key is replaced. */
export async function insertRecord(tx: Db, studioId: string, key: string, rec: StoredResponse) {
  await tx`
    insert into idempotency_records (studio_id, key, fingerprint, status, headers, body, expires_at)
    values (${studioId}, ${key}, ${rec.fingerprint}, ${rec.status}, ${tx.json(rec.headers)}, ${rec.body}, now() + make_interval(secs => ${RETENTION_S}))
    on conflict (studio_id, key) do update set
      fingerprint = excluded.fingerprint, status = excluded.status, headers = excluded.headers, body = excluded.body,
      created_at = now(), expires_at = excluded.expires_at
    where idempotency_records.expires_at <= now()`;
}

/** Drops expired records now and then (retention 24 h), off the request's critical path. */
export function sweepExpired(sql: Sql) {
  sql`delete from idempotency_records where ctid = any(array(
        select ctid from idempotency_records where expires_at < now() limit 1000))`.catch(() => {});
}
