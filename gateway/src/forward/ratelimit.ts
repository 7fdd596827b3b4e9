import type { Redis } from '@studio/shared/redis';
import { parseBucket } from '@studio/shared';
import type { redisNames } from '../keys/channels';

/**
 * Token buckets live in Redis, shared by every gateway replica. A replica does not
 * ask Redis per request: it leases a few tokens at a time (about 50 ms of the key's
 * rate, 1 when the rate is small) and spends them locally, so Redis round trips grow
 * with the limit, not with the traffic. A refusal is remembered until the next token
 * is due, so a flood costs one round trip. The script also refuses any key carrying
 * a revoked marker.
 *
 * Returns [granted (or -1 revoked), then per bucket: remaining, s until full, ms until the next token].
 */
const SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {-1} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local want = tonumber(ARGV[1])
local tokens = {}
local grant = want
for i = 2, #KEYS do
  local rate = tonumber(ARGV[(i - 2) * 2 + 2])
  local burst = tonumber(ARGV[(i - 2) * 2 + 3])
  local s = redis.call('HMGET', KEYS[i], 'tk', 'ts')
  local tk = tonumber(s[1]) or burst
  local ts = tonumber(s[2]) or now
  tk = math.min(burst, tk + math.max(0, now - ts) * rate)
  tokens[i] = tk
  grant = math.min(grant, math.floor(tk))
end
if grant < 1 then grant = 0 end
local out = {grant}
for i = 2, #KEYS do
  local rate = tonumber(ARGV[(i - 2) * 2 + 2])
  local burst = tonumber(ARGV[(i - 2) * 2 + 3])
  local tk = tokens[i] - grant
  redis.call('HSET', KEYS[i], 'tk', tostring(tk), 'ts', tostring(now))
  redis.call('PEXPIRE', KEYS[i], math.ceil(burst / rate * 1000) + 1000)
  out[#out + 1] = math.floor(tk)
  out[#out + 1] = math.ceil((burst - tk) / rate)
  out[#out + 1] = tk >= 1 and 0 or math.ceil((1 - tk) / rate * 1000)
end
return out`;

export interface Bucket {
  policy: string;
  name: string;
  rate: number;
  burst: number;
}

export interface LimitResult {
  revoked: boolean;
  allowed: boolean;
  headers: Record<string, string>;
  retryAfter: number;
}

interface Lease {
  left: number;
  expires: number;
  deniedUntil: number;
  /** Per bucket, from the last grant: remaining in Redis, seconds until full. */
  remaining: number[];
  full: number[];
  policy: string;
  pending: Promise<void> | null;
}

const LEASE_MS = 1_000;
const MAX_LEASE = 1_000;
const LEASES_MAX = 100_000;

/** Tokens to lease for a set of buckets: about 50 ms of the smallest rate, never over a tenth of a burst. */
export const leaseSize = (buckets: Bucket[]) =>
  Math.max(1, Math.min(MAX_LEASE, ...buckets.map((b) => Math.floor(Math.min(b.rate * 0.05, b.burst * 0.1)))));

export class RateLimiter {
  private sha: string | null = null;
  private leases = new Map<string, Lease>();
  readonly secret;
  readonly publishableClient;
  readonly publishable;

  constructor(private redis: Redis | null, private names: ReturnType<typeof redisNames>, cfg: { secret: string; publishableClient: string; publishable: string }) {
    this.secret = parseBucket(cfg.secret);
    this.publishableClient = parseBucket(cfg.publishableClient);
    this.publishable = parseBucket(cfg.publishable);
  }

  bucketsFor(keyId: string, kind: 'secret' | 'publishable', client: string): Bucket[] {
    if (kind === 'secret') return [{ policy: 'key', name: keyId, ...this.secret }];
    return [
      { policy: 'client', name: `${keyId}:${client}`, ...this.publishableClient },
      { policy: 'key', name: keyId, ...this.publishable },
    ];
  }

  /** null when Redis is unreachable: the request is let through (fail open); Postgres still guards revocation. */
  async check(keyHash: string, buckets: Bucket[]): Promise<LimitResult | null> {
    const id = buckets.length === 1 ? buckets[0]!.name : buckets.map((b) => b.name).join('|');
    for (let attempt = 0; attempt < 3; attempt++) {
      const lease = this.leases.get(id);
      const now = Date.now();
      if (lease && lease.left > 0 && lease.expires > now) {
        lease.left--;
        return { revoked: false, allowed: true, retryAfter: 0, headers: this.headersOf(lease, buckets) };
      }
      if (lease && lease.deniedUntil > now) {
        return { revoked: false, allowed: false, retryAfter: Math.max(1, Math.ceil((lease.deniedUntil - now) / 1000)), headers: this.headersOf(lease, buckets) };
      }
      if (!this.redis?.isReady) return null;
      if (lease?.pending) {
        await lease.pending;
        continue;
      }
      const revoked = await this.refill(id, keyHash, buckets);
      if (revoked === null) return null;
      if (revoked) return { revoked: true, allowed: false, headers: {}, retryAfter: 0 };
    }
    return null;
  }

  /** Asks Redis for a lease; null on a Redis failure, true when the key is revoked. */
  private async refill(id: string, keyHash: string, buckets: Bucket[]): Promise<boolean | null> {
    let lease = this.leases.get(id);
    if (!lease) {
      if (this.leases.size >= LEASES_MAX) this.leases.clear();
      lease = { left: 0, expires: 0, deniedUntil: 0, remaining: [], full: [], policy: buckets.map((b) => `"${b.policy}";q=${b.rate};w=1`).join(', '), pending: null };
      this.leases.set(id, lease);
    }
    let result: boolean | null = false;
    const l = lease;
    l.pending = (async () => {
      const keys = [this.names.revoked(keyHash), ...buckets.map((b) => this.names.bucket(b.name))];
      const args = [String(leaseSize(buckets)), ...buckets.flatMap((b) => [String(b.rate), String(b.burst)])];
      try {
        const out = (await this.run(keys, args)) as number[];
        if (out[0] === -1) {
          this.leases.delete(id);
          result = true;
          return;
        }
        const now = Date.now();
        let nextMs = 0;
        l.remaining = buckets.map((_, i) => out[1 + i * 3]!);
        l.full = buckets.map((_, i) => out[2 + i * 3]!);
        for (let i = 0; i < buckets.length; i++) nextMs = Math.max(nextMs, out[3 + i * 3]!);
        l.left = out[0]!;
        l.expires = now + LEASE_MS;
        l.deniedUntil = l.left > 0 ? 0 : now + Math.max(nextMs, 1);
      } catch {
        this.leases.delete(id);
        result = null;
      }
    })().finally(() => (l.pending = null));
    await l.pending;
    return result;
  }

  private headersOf(lease: Lease, buckets: Bucket[]): Record<string, string> {
    const state = buckets.map((b, i) => `"${b.policy}";r=${Math.max(0, (lease.remaining[i] ?? 0) + lease.left)};t=${lease.full[i] ?? 0}`);
    return { 'ratelimit-policy': lease.policy, ratelimit: state.join(', ') };
  }

  private async run(keys: string[], args: string[]) {
    if (this.sha) {
      try {
        return await this.redis!.evalSha(this.sha, { keys, arguments: args });
      } catch (e) {
        if (!String(e).includes('NOSCRIPT')) throw e;
      }
    }
    this.sha = await this.redis!.scriptLoad(SCRIPT);
    return this.redis!.evalSha(this.sha, { keys, arguments: args });
  }
}
