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
}

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
        if (raw) rec = JSON.parse(raw) as KeyRecord;
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
      await this.redis?.eval(SET_UNLESS_STALE, { keys: [this.names.record(hash), this.names.stale(hash)], arguments: [JSON.stringify(rec), String(RECORD_TTL_S)] });
    } catch {
      /* only a cache */
    }
  }

  private async fromPostgres(hash: string): Promise<KeyRecord | null> {
    const [row] = await this.sql<{ id: string; studioId: string; kind: KeyKind; scopes: string[]; revokedAt: Date | null; deletedAt: Date | null }[]>`
      select k.id, k.studio_id, k.kind, k.scopes, k.revoked_at, s.deleted_at
      from api_keys k join studios s on s.id = k.studio_id
      where k.hash = ${hash}`;
    if (!row) return null;
    return { id: row.id, studioId: row.studioId, kind: row.kind, scopes: row.scopes, revoked: row.revokedAt !== null, studioLive: row.deletedAt === null };
  }

  evict(hash: string) {
    this.epoch++;
    this.local.delete(hash);
  }

  flush() {
    this.epoch++;
    this.local.clear();
  }
}
