import type { Bucket, BucketStore, Grant, Take } from './buckets';

interface State {
  /** Tokens at `at` (seconds, monotonic). */
  tk: number;
  at: number;
  /** When the bucket is full again, and so the same as one never used (it can be forgotten). */
  fullAt: number;
}

const SWEEP_S = 10;

/**
 * Token buckets in this process's memory: single-node mode's limiter (docs/design/single-node.md). The
 * arithmetic is the Redis script's (`redis-buckets.ts`), on a monotonic clock; every take is
 * exact and synchronous, never fails, and so never fails open. A bucket that has filled up
 * again is forgotten (a swept one is the same as a new one), so memory follows the keys in use.
 */
export class MemoryBuckets implements BucketStore {
  readonly ready = true;
  private states = new Map<string, State>();
  private sweptAt = 0;

  /** Buckets held (tests). */
  get size(): number {
    return this.states.size;
  }

  take(keyHash: string, buckets: Bucket[], want: number): Promise<Take> {
    return Promise.resolve(this.takeNow(keyHash, buckets, want));
  }

  takeNow(keyHash: string, buckets: Bucket[], want: number, now = performance.now() / 1000): Grant {
    if (now - this.sweptAt > SWEEP_S) this.sweep(now);
    let granted = want;
    const tokens = buckets.map((b) => {
      const s = this.states.get(`${keyHash}\n${b.name}`);
      const tk = s ? Math.min(b.burst, s.tk + Math.max(0, now - s.at) * b.rate) : b.burst;
      granted = Math.min(granted, Math.floor(tk));
      return tk;
    });
    if (granted < 1) granted = 0;
    const grant: Grant = { granted, remaining: [], full: [], nextMs: 0 };
    buckets.forEach((b, i) => {
      const tk = tokens[i]! - granted;
      this.states.set(`${keyHash}\n${b.name}`, { tk, at: now, fullAt: now + (b.burst - tk) / b.rate });
      grant.remaining.push(Math.floor(tk));
      grant.full.push(Math.ceil((b.burst - tk) / b.rate));
      grant.nextMs = Math.max(grant.nextMs, tk >= 1 ? 0 : Math.ceil(((1 - tk) / b.rate) * 1000));
    });
    return grant;
  }

  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [id, s] of this.states) if (s.fullAt <= now) this.states.delete(id);
  }
}
