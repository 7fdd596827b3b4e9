import type { redisNames } from '@studio/shared';
import { bounded, type Redis, redisUsable } from '@studio/shared/io';
import type { Bucket, BucketStore, Take } from './buckets';

/**
 * Token buckets in Redis, shared by every gateway replica. The script takes tokens from every
 * bucket of a request at once, on Redis's clock, and also refuses any key carrying a revoked
 * marker (unless ARGV[2] is 0: the caller already knows it is revoked, and the call, refused
 * anyway, still spends a token).
 *
 * Returns [granted (or -1 revoked), then per bucket: remaining, s until full, ms until the next token].
 */
const SCRIPT = `
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then return {-1} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local want = tonumber(ARGV[1])
local tokens = {}
local grant = want
for i = 2, #KEYS do
  local rate = tonumber(ARGV[(i - 2) * 2 + 3])
  local burst = tonumber(ARGV[(i - 2) * 2 + 4])
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
  local rate = tonumber(ARGV[(i - 2) * 2 + 3])
  local burst = tonumber(ARGV[(i - 2) * 2 + 4])
  local tk = tokens[i] - grant
  redis.call('HSET', KEYS[i], 'tk', tostring(tk), 'ts', tostring(now))
  redis.call('PEXPIRE', KEYS[i], math.ceil(burst / rate * 1000) + 1000)
  out[#out + 1] = math.floor(tk)
  out[#out + 1] = math.ceil((burst - tk) / rate)
  out[#out + 1] = tk >= 1 and 0 or math.ceil((1 - tk) / rate * 1000)
end
return out`;

/** The Redis implementation of `BucketStore`: round trips the limiter saves with leases (`rate-limiter.ts`). */
export class RedisBuckets implements BucketStore {
  constructor(
    private redis: Redis | null,
    private names: ReturnType<typeof redisNames>,
  ) {}

  get ready(): boolean {
    return redisUsable(this.redis);
  }

  /** null on any Redis failure: the limiter then fails open (docs/design/gateway.md), and says so in its log. */
  async take(keyHash: string, buckets: Bucket[], want: number, checkRevoked: boolean): Promise<Take> {
    if (!this.redis) return null;
    const keys = [this.names.revoked(keyHash), ...buckets.map((b) => this.names.bucket(keyHash, b.name))];
    const args = [String(want), checkRevoked ? '1' : '0', ...buckets.flatMap((b) => [String(b.rate), String(b.burst)])];
    let out: number[];
    try {
      // EVAL, not EVALSHA: every node of a cluster caches the script by its own digest on first use
      out = (await bounded(this.redis, this.redis.eval(SCRIPT, { keys, arguments: args }))) as number[];
    } catch {
      return null;
    }
    if (out[0] === -1) return 'revoked';
    let nextMs = 0;
    for (let i = 0; i < buckets.length; i++) nextMs = Math.max(nextMs, out[3 + i * 3]!);
    return {
      granted: out[0]!,
      remaining: buckets.map((_, i) => out[1 + i * 3]!),
      full: buckets.map((_, i) => out[2 + i * 3]!),
      nextMs,
    };
  }
}
