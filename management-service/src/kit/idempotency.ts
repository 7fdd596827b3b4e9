import { type Config, redisMode } from '@studio/shared';
import type { Db, Sql, Tx } from '@studio/shared/io';
import { bounded, type Redis, redisUsable } from '@studio/shared/io';

/** Idempotency records (docs/design/idempotency.md): Postgres is the truth; the lock and the hot copy are `IdempotencyLocks`. */
export const RETENTION_S = 24 * 60 * 60;
/**
 * How much earlier than its Postgres record the Redis copy of a response expires. The record's clock starts at its
 * insert; the copy's after the commit, and a replay's copy from a remaining time read inside its transaction.
 */
const HOT_COPY_MARGIN_S = 60;
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
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

export function fingerprintOf(method: string, path: string, body: unknown): string {
  return new Bun.CryptoHasher('sha256')
    .update(`${method.toUpperCase()}\n${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/**
 * The fingerprint of a request whose body is not JSON (a write refused before it was parsed): the hex SHA-256 of its
 * bytes, as the gateway signed it. `bytes:` cannot begin canonical JSON, so it never equals a parsed body's.
 */
export function fingerprintOfBytes(method: string, path: string, bodySha256: string): string {
  return new Bun.CryptoHasher('sha256').update(`${method.toUpperCase()}\n${path}\nbytes:${bodySha256}`).digest('hex');
}

const names = (prefix: string, studioId: string, key: string) => {
  const id = new Bun.CryptoHasher('sha256').update(`${studioId}\n${key}`).digest('hex').slice(0, 40);
  return { record: `${prefix}idem:rec:${id}`, lock: `${prefix}idem:lock:${id}` };
};

/**
 * A key's in-flight lock and the hot copy of its record: one interface, two implementations
 * (`redisLocks`, `postgresLocks`). Either way the write's own transaction also takes the
 * key's advisory lock (`tryKeyLock`) and reads the record there, so one effect per key never
 * depends on Redis.
 */
export interface IdempotencyLocks {
  /** The key's answer from the hot copy, or null: Postgres decides. */
  cached(studioId: string, key: string): Promise<StoredResponse | null>;
  /** Keeps a hot copy for `ttlS` seconds (best effort). */
  cache(studioId: string, key: string, rec: StoredResponse, ttlS?: number): Promise<void>;
  /** Before the transaction: 'held', 'busy' (a request of this key is in flight), or 'none' (the transaction's advisory lock decides alone). */
  take(studioId: string, key: string, token: string): Promise<'held' | 'busy' | 'none'>;
  release(studioId: string, key: string, token: string): Promise<void>;
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Redis: a SET NX lock that a holder dying without releasing frees in LOCK_TTL_MS, and a hot
 * copy. A Redis that is down (or null) answers as `postgresLocks` does: 'none', no copy.
 */
export function redisLocks(redis: Redis | null, prefix: string): IdempotencyLocks {
  const usable = redisUsable;
  return {
    async cached(studioId, key) {
      if (!usable(redis)) return null;
      try {
        const raw = await bounded(redis, redis.get(names(prefix, studioId, key).record));
        return raw ? (JSON.parse(raw) as StoredResponse) : null;
      } catch {
        return null;
      }
    },
    async cache(studioId, key, rec, ttlS = RETENTION_S) {
      // the copy goes a little before the record: never a replay (or a 409) Postgres would no longer give
      const ex = Math.floor(ttlS) - HOT_COPY_MARGIN_S;
      if (!usable(redis) || ex <= 0) return;
      try {
        await bounded(redis, redis.set(names(prefix, studioId, key).record, JSON.stringify(rec), { EX: ex }));
      } catch {
        /* the hot copy is only a cache of the Postgres record */
      }
    },
    async take(studioId, key, token) {
      if (!usable(redis)) return 'none';
      try {
        const ok = await bounded(
          redis,
          redis.set(names(prefix, studioId, key).lock, token, { NX: true, PX: LOCK_TTL_MS }),
        );
        return ok === 'OK' ? 'held' : 'busy';
      } catch {
        return 'none';
      }
    },
    async release(studioId, key, token) {
      if (!usable(redis)) return;
      try {
        await bounded(redis, redis.eval(RELEASE, { keys: [names(prefix, studioId, key).lock], arguments: [token] }));
      } catch {
        /* it expires on its own */
      }
    },
  };
}

/**
 * Drops the Redis copies of a studio's records (a sandbox reset deleted them in Postgres): no answer of before is
 * replayed after. One key at a time (on a Redis Cluster they lie in different slots); a Redis that is down keeps its
 * copies until they expire, which the reset's page says (docs/design/test-mode.md).
 */
export async function forgetHotCopies(redis: Redis | null, prefix: string, studioId: string, keys: string[]) {
  if (!redisUsable(redis)) return;
  await Promise.all(keys.map((key) => bounded(redis, redis.del(names(prefix, studioId, key).record)).catch(() => 0)));
}

/**
 * Postgres alone (single-node mode, docs/design/single-node.md): the lock is the transaction-scoped advisory
 * lock `tryKeyLock` takes in the write's own transaction, held by a request in flight until it
 * commits or rolls back and freed with its connection if the process dies; no hot copy (the
 * record is read in that transaction).
 */
export const postgresLocks: IdempotencyLocks = {
  cached: async () => null,
  cache: async () => {},
  take: async () => 'none',
  release: async () => {},
};

const locksOf = new WeakMap<object, IdempotencyLocks>();
/** The locks of a service's deps: Postgres in single-node mode (and without a Redis client), else Redis. */
export function idempotencyLocks(deps: {
  config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_PREFIX'>;
  redis: Redis | null;
}): IdempotencyLocks {
  let locks = locksOf.get(deps);
  if (!locks) {
    locks =
      redisMode(deps.config) === 'single-node' || !deps.redis
        ? postgresLocks
        : redisLocks(deps.redis, deps.config.REDIS_PREFIX);
    locksOf.set(deps, locks);
  }
  return locks;
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
  const [row] = await tx<
    { ok: boolean }[]
  >`select pg_try_advisory_xact_lock(hashtextextended(${`idem\n${studioId}\n${key}`}, 0)) as ok`;
  return !!row?.ok;
}

/** Stores a response; an expired record of the same key is replaced. */
export async function insertRecord(tx: Db, studioId: string, key: string, rec: StoredResponse) {
  await tx`
    insert into idempotency_records (studio_id, key, fingerprint, status, headers, body, expires_at)
    values (${studioId}, ${key}, ${rec.fingerprint}, ${rec.status}, ${tx.json(rec.headers)}, ${rec.body}, clock_timestamp() + make_interval(secs => ${RETENTION_S}))
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
