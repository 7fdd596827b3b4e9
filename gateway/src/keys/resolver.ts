import type { Sql } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';
import type { KeyKind } from '@studio/shared';
import { RECORD_TTL_S, redisNames } from './channels';

export interface KeyRecord {
  id: string;
  studioId: string;
  kind: KeyKind;
  scopes: string[];
  revoked: boolean;
  /** False once the key's studio is deleted: 403 `studio_required`. */
  studioLive: boolean;
  /** When the key stops working (ms since the epoch; a rolled key's old text), or null. */
  expiresAt: number | null;
}

/** A record as kept in Redis: stamped with when it was cached (the writing replica's clock). */
type Shared = KeyRecord & { cachedAt: number };
const toRecord = ({ cachedAt: _, ...rec }: Shared): KeyRecord => rec;

const LOCAL_TTL_MS = 60_000;
const NEGATIVE_TTL_MS = 5_000;
const LOCAL_MAX = 100_000;

/**
 * SHA-256 hash -> in-process cache -> Redis -> Postgres. The in-process cache is
 * trusted only while the revocation subscription is live (`useLocal`); the moment
 * it drops, lookups skip Redis too and go to Postgres, which always knows.
 */
const SET_UNLESS_STALE = `if redis.call('EXISTS', KEYS[2]) == 0 then return redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end return 0`;

export class KeyResolver {
  private local = new Map<string, { rec: KeyRecord | null; exp: number }>();
  /** Bumped by every eviction: a lookup that overlapped one must not cache what it read. */
  private epoch = 0;
  useLocal = false;
  /** Redis records cached earlier than this (the last flush: start, or a broken or restored subscription) are not trusted. */
  private trustSince = Date.now();

  constructor(private sql: Sql, private redis: Redis | null, private names: ReturnType<typeof redisNames>) {}

  /** The in-process answer, if there is one to trust (undefined: ask `resolve`). */
  peek(hash: string): KeyRecord | null | undefined {
    if (!this.useLocal) return undefined;
    const hit = this.local.get(hash);
    return hit && hit.exp > Date.now() ? hit.rec : undefined;
  }

  async resolve(hash: string): Promise<KeyRecord | null> {
    const now = Date.now();
    const epoch = this.epoch;
    if (this.useLocal) {
      const hit = this.local.get(hash);
      if (hit && hit.exp > now) return hit.rec;
    }
    const redisUp = this.useLocal && this.redis?.isReady;
    let rec: KeyRecord | null | undefined;
    if (redisUp) {
      try {
        const raw = await this.redis!.get(this.names.record(hash));
        const cached = raw ? (JSON.parse(raw) as Shared) : undefined;
        // a record cached before this replica last (re)connected may predate a revocation Redis never heard of
        // (revoked while Redis was down, then Redis restored from its dump): Postgres judges it again
        if (cached && cached.cachedAt >= this.trustSince) rec = toRecord(cached);
      } catch {
        /* fall through to Postgres */
      }
    }
    if (rec === undefined) {
      rec = await this.fromPostgres(hash);
      if (rec && redisUp && this.epoch === epoch) void this.share(hash, rec);
    }
    if (this.useLocal && this.epoch === epoch) {
      if (this.local.size >= LOCAL_MAX) this.local.delete(this.local.keys().next().value!);
      this.local.set(hash, { rec, exp: now + (rec ? LOCAL_TTL_MS : NEGATIVE_TTL_MS) });
    }
    return rec;
  }

  /** Cache a record read from Postgres in Redis, atomically skipped if an eviction marked the key since (the read may predate it). */
  async share(hash: string, rec: KeyRecord): Promise<void> {
    try {
      const shared: Shared = { ...rec, cachedAt: Date.now() };
      await this.redis?.eval(SET_UNLESS_STALE, { keys: [this.names.record(hash), this.names.stale(hash)], arguments: [JSON.stringify(shared), String(RECORD_TTL_S)] });
    } catch {
      /* only a cache */
    }
  }

  private async fromPostgres(hash: string): Promise<KeyRecord | null> {
    const [row] = await this.sql<{ id: string; studioId: string; kind: KeyKind; scopes: string[]; revokedAt: Date | null; expiresAt: Date | null; deletedAt: Date | null }[]>`
      select k.id, k.studio_id, k.kind, k.scopes, k.revoked_at, k.expires_at, s.deleted_at
      from api_keys k join studios s on s.id = k.studio_id
      where k.hash = ${hash}`;
    if (!row) return null;
    return {
      id: row.id, studioId: row.studioId, kind: row.kind, scopes: row.scopes, revoked: row.revokedAt !== null,
      studioLive: row.deletedAt === null, expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
    };
  }

  evict(hash: string) {
    this.epoch++;
    this.local.delete(hash);
  }

  /** Forget every in-process record, and judge every Redis record cached before now against Postgres again. */
  flush() {
    this.epoch++;
    this.local.clear();
    this.trustSince = Date.now();
  }
}
