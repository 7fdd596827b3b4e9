/**
 * Where a key's token buckets live: one interface, two implementations. `RedisBuckets`
 * (`redis-buckets.ts`) shares them between every gateway replica; `MemoryBuckets`
 * (`memory-buckets.ts`) keeps them in this process, for single-node mode (docs/design/single-node.md),
 * where this process is the only gateway, so its memory is exact.
 */

export interface Bucket {
  policy: string;
  name: string;
  rate: number;
  burst: number;
}

/** What a take answered: the tokens granted (as many from every bucket), and per bucket what is left, seconds until full; ms until the next token of the emptiest. */
export interface Grant {
  granted: number;
  remaining: number[];
  full: number[];
  nextMs: number;
}

/** A grant; `revoked`: the key carries a revoked marker (Redis: set by a revoke on any process); null: the store cannot decide (Redis unreachable). */
export type Take = Grant | 'revoked' | null;

export interface BucketStore {
  /** Can answer now; false (Redis unreachable) makes the limiter fail open rather than wait. */
  readonly ready: boolean;
  /** Takes up to `want` tokens from every bucket of one request at once; `checkRevoked` first asks for the key's revoked marker. */
  take(keyHash: string, buckets: Bucket[], want: number, checkRevoked: boolean): Promise<Take>;
  /**
   * A store in this process answers synchronously and exactly: the limiter takes one token per
   * request here, with no lease to spend locally and no round trip to save.
   */
  takeNow?(keyHash: string, buckets: Bucket[], want: number): Grant;
}
