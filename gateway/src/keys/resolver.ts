import type { KeyKind, KeyMode } from '@studio/shared';
import { RECORD_TTL_S, type redisNames } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import { bounded, type Redis, redisUsable } from '@studio/shared/io';
import { type CacheTier, type SharedTier, TieredCache } from '../cache/tiered';

export interface KeyRecord {
  id: string;
  studioId: string;
  kind: KeyKind;
  /** `test`: a sandbox's key (its studio is a sandbox, docs/design/test-mode.md). */
  mode: KeyMode;
  scopes: string[];
  revoked: boolean;
  /** False once the key's studio is deleted: 403 `studio_required`. */
  studioLive: boolean;
  /** When the key stops working (ms since the epoch; a rolled key's old text), or null. */
  expiresAt: number | null;
  /** Origins a publishable key may be called from (browser `Origin`), or null for any. */
  allowedOrigins: string[] | null;
}

/** A record as kept in Redis: stamped with when it was cached (the writing replica's clock). */
type Shared = KeyRecord & { cachedAt: number };
/** A record cached before test mode existed names no mode: it is a live key's. */
const toRecord = ({ cachedAt: _, ...rec }: Shared): KeyRecord => (rec.mode ? rec : { ...rec, mode: 'live' });

const LOCAL_TTL_MS = 60_000;
const NEGATIVE_TTL_MS = 5_000;
/** A record past its minute is still used for this long while one lookup refreshes it (revocations evict at once). */
const STALE_MS = 30_000;
const LOCAL_MAX = 100_000;
/** Unknown keys remembered (a negative entry saves a lookup for 5 s), kept apart from the live ones: a flood of random keys cannot evict those. */
const NEGATIVE_MAX = 10_000;

export interface KeyCacheOptions {
  /** Records of real keys kept in memory. */
  maxEntries?: number;
  /** Unknown keys kept in memory, apart from those. */
  maxNegative?: number;
}

/** Thrown by a lookup that a gate refused before it reached Postgres (the caller's address is over its unknown-key limit). */
export class LookupRefused extends Error {
  constructor(readonly answer: unknown) {
    super('key lookup refused');
  }
}

const SET_UNLESS_STALE = `if redis.call('EXISTS', KEYS[2]) == 0 then return redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end return 0`;

/**
 * Key records by SHA-256 of the key text: the gateway's tiered cache (memory, then
 * Redis, then Postgres), with negative entries for unknown keys. Memory and Redis
 * are trusted only while the revocation subscription is live (`useLocal`); the
 * moment it drops, lookups go to Postgres, which always knows.
 */
export class KeyResolver {
  private cache: TieredCache<KeyRecord | null>;
  private shared: SharedTier<KeyRecord | null> | undefined;
  /** Redis records cached earlier than this (the last flush: start, or a broken or restored subscription) are not trusted. */
  private trustSince = Date.now();

  constructor(
    private sql: Sql,
    redis: Redis | null,
    private names: ReturnType<typeof redisNames>,
    private onRead?: (tier: CacheTier) => void,
    o: KeyCacheOptions = {},
  ) {
    this.shared = redis ? this.redisTier(redis) : undefined;
    this.cache = new TieredCache<KeyRecord | null>({
      freshMs: (rec) => (rec ? LOCAL_TTL_MS : NEGATIVE_TTL_MS),
      staleMs: STALE_MS,
      maxEntries: o.maxEntries ?? LOCAL_MAX,
      apart: { is: (rec) => rec === null, maxEntries: o.maxNegative ?? NEGATIVE_MAX },
      shared: this.shared,
      onRead,
    });
  }

  /** Records and negative entries held in memory. */
  get cached(): number {
    return this.cache.size;
  }

  get useLocal(): boolean {
    return this.cache.enabled;
  }

  set useLocal(live: boolean) {
    this.cache.enabled = live;
    this.trustSince = Date.now();
  }

  /** The in-process answer, if there is one to trust (undefined: ask `resolve`). */
  peek(hash: string): KeyRecord | null | undefined {
    const rec = this.cache.peek(hash);
    if (rec !== undefined) this.onRead?.('memory');
    return rec;
  }

  /**
   * A key whose record is still in memory past its freshness (within its stale window): valid when last looked up,
   * so no unknown key for the per-address limit; its lookup answers from that record and refreshes it.
   */
  seenValid(hash: string): boolean {
    const rec = this.cache.peekStale(hash);
    return rec !== undefined && rec !== null;
  }

  /**
   * From memory, Redis or Postgres. `beforePostgres` runs only when the lookup must ask
   * Postgres, and may refuse it (throw `LookupRefused`): the per-address limit of unknown keys.
   */
  resolve(hash: string, beforePostgres?: () => void | Promise<void>): Promise<KeyRecord | null> {
    return this.cache.get(
      hash,
      beforePostgres ? async () => (await beforePostgres(), this.fromPostgres(hash)) : () => this.fromPostgres(hash),
    );
  }

  /** Offers a record read from Postgres to Redis (refused there if the key was evicted since). */
  async share(hash: string, rec: KeyRecord): Promise<void> {
    await this.shared?.set(hash, rec).catch(() => {});
  }

  /** Redis as the shared tier: a record cached there before this replica last (re)connected is judged again by Postgres. */
  private redisTier(redis: Redis): SharedTier<KeyRecord | null> {
    return {
      get: async (hash) => {
        if (!redisUsable(redis)) return undefined;
        const raw = await bounded(redis, redis.get(this.names.record(hash)));
        const cached = raw ? (JSON.parse(raw) as Shared) : undefined;
        // it may predate a revocation Redis never heard of (revoked while Redis was down, then Redis restored from its dump)
        return cached && cached.cachedAt >= this.trustSince ? toRecord(cached) : undefined;
      },
      // atomically skipped if an eviction marked the key since (the read may predate it); unknown keys stay local
      set: async (hash, rec) => {
        if (!rec || !redisUsable(redis)) return;
        const shared: Shared = { ...rec, cachedAt: Date.now() };
        await bounded(
          redis,
          redis.eval(SET_UNLESS_STALE, {
            keys: [this.names.record(hash), this.names.stale(hash)],
            arguments: [JSON.stringify(shared), String(RECORD_TTL_S)],
          }),
        );
      },
    };
  }

  private async fromPostgres(hash: string): Promise<KeyRecord | null> {
    const [row] = await this.sql<
      {
        id: string;
        studioId: string;
        kind: KeyKind;
        scopes: string[];
        revokedAt: Date | null;
        expiresAt: Date | null;
        deletedAt: Date | null;
        allowedOrigins: string[] | null;
        sandbox: boolean;
      }[]
    >`
      select k.id, k.studio_id, k.kind, k.scopes, k.revoked_at, k.expires_at, k.allowed_origins, s.deleted_at,
             s.live_studio_id is not null as sandbox
      from api_keys k join studios s on s.id = k.studio_id
      where k.hash = ${hash}`;
    if (!row) return null;
    return {
      id: row.id,
      studioId: row.studioId,
      kind: row.kind,
      mode: row.sandbox ? 'test' : 'live',
      scopes: row.scopes,
      revoked: row.revokedAt !== null,
      studioLive: row.deletedAt === null,
      expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
      allowedOrigins: row.kind === 'publishable' ? row.allowedOrigins : null,
    };
  }

  evict(hash: string) {
    this.cache.evict(hash);
  }

  /** Forget every in-process record, and judge every Redis record cached before now against Postgres again. */
  flush() {
    this.cache.flush();
    this.trustSince = Date.now();
  }
}
