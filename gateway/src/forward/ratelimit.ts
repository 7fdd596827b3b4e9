import type { Redis } from '@studio/shared/redis';
import { parseBucket } from '@studio/shared';
import type { redisNames } from '../keys/channels';

/**
 * One round trip per request: the revoked-marker check and every token bucket of
 * the key, atomically. Returns [allowed (1/0, or -1 revoked), then per bucket:
 * remaining, seconds until full, seconds until the next token].
 */
const SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {-1} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tokens = {}
local allowed = 1
for i = 2, #KEYS do
  local rate = tonumber(ARGV[(i - 2) * 2 + 1])
  local burst = tonumber(ARGV[(i - 2) * 2 + 2])
  local s = redis.call('HMGET', KEYS[i], 'tk', 'ts')
  local tk = tonumber(s[1]) or burst
  local ts = tonumber(s[2]) or now
  tk = math.min(burst, tk + math.max(0, now - ts) * rate)
  tokens[i] = tk
  if tk < 1 then allowed = 0 end
end
local out = {allowed}
for i = 2, #KEYS do
  local rate = tonumber(ARGV[(i - 2) * 2 + 1])
  local burst = tonumber(ARGV[(i - 2) * 2 + 2])
  local tk = tokens[i]
  if allowed == 1 then tk = tk - 1 end
  redis.call('HSET', KEYS[i], 'tk', tostring(tk), 'ts', tostring(now))
  redis.call('PEXPIRE', KEYS[i], math.ceil(burst / rate * 1000) + 1000)
  out[#out + 1] = math.floor(tk)
  out[#out + 1] = math.ceil((burst - tk) / rate)
  out[#out + 1] = tk >= 1 and 0 or math.ceil((1 - tk) / rate)
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

export class RateLimiter {
  private sha: string | null = null;
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

  /** null when Redis is unreachable: the request is let through (fail open) and Postgres still guards revocation. */
  async check(keyHash: string, buckets: Bucket[]): Promise<LimitResult | null> {
    if (!this.redis?.isReady) return null;
    const keys = [this.names.revoked(keyHash), ...buckets.map((b) => this.names.bucket(b.name))];
    const args = buckets.flatMap((b) => [String(b.rate), String(b.burst)]);
    let out: number[];
    try {
      out = (await this.run(keys, args)) as number[];
    } catch {
      return null;
    }
    if (out[0] === -1) return { revoked: true, allowed: false, headers: {}, retryAfter: 0 };
    const policy: string[] = [];
    const state: string[] = [];
    let retryAfter = 0;
    buckets.forEach((b, i) => {
      const [left, full, next] = [out[1 + i * 3]!, out[2 + i * 3]!, out[3 + i * 3]!];
      policy.push(`"${b.policy}";q=${b.rate};w=1`);
      state.push(`"${b.policy}";r=${Math.max(0, left)};t=${full}`);
      retryAfter = Math.max(retryAfter, next);
    });
    return {
      revoked: false,
      allowed: out[0] === 1,
      retryAfter: Math.max(1, retryAfter),
      headers: { 'ratelimit-policy': policy.join(', '), ratelimit: state.join(', ') },
    };
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
