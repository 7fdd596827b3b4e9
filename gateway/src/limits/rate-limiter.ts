import { log, parseBucket } from '@studio/shared';
import type { Bucket, BucketStore, Grant } from './buckets';

/**
 * The gateway's rate limits (docs/design/gateway.md) over a `BucketStore` (`buckets.ts`). With Redis the
 * buckets are shared by every replica, and a replica does not ask Redis per request: it leases
 * a few tokens at a time (about 50 ms of the key's rate, 1 when the rate is small) and spends
 * them locally, so Redis round trips grow with the limit, not with the traffic; a refusal is
 * remembered until the next token is due, so a flood costs one round trip. In single-node mode
 * the buckets are in this process (`MemoryBuckets`): every request takes its own token there,
 * synchronously and exactly, and nothing ever fails open.
 */
export type { Bucket } from './buckets';

export interface LimitResult {
  revoked: boolean;
  allowed: boolean;
  headers: Record<string, string>;
  retryAfter: number;
}

/** The buckets one request draws on (a secret key's, or a publishable key's per client and overall), with their local lease. */
export interface Group {
  id: string;
  buckets: Bucket[];
  policy: string;
  /** Each bucket's start in the RateLimit field (`"key";r=`, after a comma but the first), made once. */
  named: string[];
  /** Tokens asked of Redis per lease (`leaseSize`). */
  lease: number;
  /** Tokens leased from Redis and not yet spent, valid until `expires`. */
  left: number;
  expires: number;
  /** Redis refused: answer 429 locally until then. */
  deniedUntil: number;
  /** Per bucket, from the last grant: remaining in Redis, seconds until full. */
  remaining: number[];
  full: number[];
  pending: Promise<boolean | null> | null;
  /** Requests of this group waiting on Redis now: a refill asks for as many tokens as wait, a lease at least. */
  waiting: number;
  /** When a token of its lease was last spent (ms): a lease is renewed ahead only for a stream of calls. */
  lastUse: number;
}

const LEASE_MS = 1_000;
const MAX_LEASE = 1_000;
const GROUPS_MAX = 100_000;
/** Addresses whose unknown-key count is held here, apart from the keys' groups (a flood from many addresses cannot clear those). */
const UNKNOWN_GROUPS_MAX = 20_000;
/** What an address is counted by: itself (IPv4), or its /64 (IPv6: one subscriber's network). */
const BLOCK_MAX = 100;
/** Leases a waiting request may see go to others before it is refused. */
const MAX_ROUNDS = 20;

/**
 * The block a client address is counted in: an IPv4 address as it is (an IPv4-mapped IPv6 one
 * too), an IPv6 address by its first 64 bits (`2001:db8:1:2::/64`), since one subscriber is
 * given a whole /64 and can pick any address in it.
 */
export function clientBlock(address: string): string {
  if (!address.includes(':')) return address.slice(0, BLOCK_MAX);
  const a = address.toLowerCase().split('%')[0]!;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  // `::` stands for as many zero groups as are missing (an embedded IPv4 tail is past the /64 anyway)
  const groups =
    tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  const first4 = Array.from({ length: 4 }, (_, i) => (Number.parseInt(groups[i] ?? '0', 16) || 0).toString(16));
  return `${first4.join(':')}::/64`;
}

/** Tokens to lease for a set of buckets: about 50 ms of the smallest rate, never over a tenth of a burst. */
export const leaseSize = (buckets: Bucket[]) =>
  Math.max(1, Math.min(MAX_LEASE, ...buckets.map((b) => Math.floor(Math.min(b.rate * 0.05, b.burst * 0.1)))));

export class RateLimiter {
  private failOpenLogged = 0;
  /** Key id -> visitor (`clientBlock`; '' for a secret key) -> group: looked up with no string built per call. */
  private groups = new Map<string, Map<string, Group>>();
  private groupCount = 0;
  private unknownGroups = new Map<string, Group>();
  readonly secret;
  readonly publishableClient;
  readonly publishable;
  readonly test;
  readonly unknownKey;

  constructor(
    private store: BucketStore,
    cfg: { secret: string; publishableClient: string; publishable: string; test?: string; unknownKey?: string },
  ) {
    this.secret = parseBucket(cfg.secret);
    this.publishableClient = parseBucket(cfg.publishableClient);
    this.publishable = parseBucket(cfg.publishable);
    this.test = parseBucket(cfg.test ?? '25:50');
    this.unknownKey = parseBucket(cfg.unknownKey ?? '10:50');
  }

  /** The unknown-key bucket of this client address's block (`clientBlock`). */
  unknownKeyGroup(client: string): Group {
    const block = clientBlock(client);
    let g = this.unknownGroups.get(block);
    if (!g) {
      const buckets: Bucket[] = [{ policy: 'unknown_key', name: 'unknown', ...this.unknownKey }];
      if (this.unknownGroups.size >= UNKNOWN_GROUPS_MAX) this.unknownGroups.clear();
      g = this.newGroup(`unknown:${block}`, buckets);
      this.unknownGroups.set(block, g);
    }
    return g;
  }

  /**
   * An address over its unknown-key limit, known without a round trip (a refusal in force), or null.
   * Checked before a key is looked up, so a flood of random keys costs no lookup once refused.
   */
  unknownKeyDenied(client: string): LimitResult | null {
    const g = this.unknownKeyGroup(client);
    const now = Date.now();
    if (g.deniedUntil <= now || (g.left > 0 && g.expires > now)) return null;
    return {
      revoked: false,
      allowed: false,
      retryAfter: Math.max(1, Math.ceil((g.deniedUntil - now) / 1000)),
      headers: this.headersOf(g),
    };
  }

  /** Spends one of the address's unknown-key tokens: synchronously when the lease or a refusal in force answers. */
  chargeUnknownKey(client: string): LimitResult | null | Promise<LimitResult | null> {
    const g = this.unknownKeyGroup(client);
    const known = this.peek(g, g.id, true);
    return known !== undefined ? known : this.check(g.id, g, true);
  }

  /**
   * Gives back the token a lookup spent when the key turned out to exist: the limit is for
   * unknown keys. It goes into the local lease (the token was taken from Redis), usable for
   * a lease's lifetime.
   */
  refundUnknownKey(client: string): void {
    const g = this.unknownKeyGroup(client);
    const now = Date.now();
    g.left = (g.expires > now ? g.left : 0) + 1;
    g.expires = Math.max(g.expires, now + LEASE_MS);
  }

  private newGroup(id: string, buckets: Bucket[]): Group {
    return {
      id,
      buckets,
      policy: buckets.map((b) => `"${b.policy}";q=${b.rate};w=1`).join(', '),
      named: buckets.map((b, i) => `${i ? ', ' : ''}"${b.policy}";r=`),
      lease: leaseSize(buckets),
      left: 0,
      expires: 0,
      deniedUntil: 0,
      remaining: [],
      full: [],
      pending: null,
      waiting: 0,
      lastUse: 0,
    };
  }

  /**
   * `client` matters for publishable keys only (one key is shared by every visitor of a site), counted by its block
   * (`clientBlock`): an IPv6 visitor picking a fresh address of its /64 for each call gets no fresh limit. A test
   * key's own bucket is RATE_LIMIT_TEST's, whatever its kind (a publishable one keeps its per-visitor bucket).
   */
  groupFor(keyId: string, kind: 'secret' | 'publishable', client: string, mode: 'live' | 'test' = 'live'): Group {
    const visitor = kind === 'secret' ? '' : clientBlock(client);
    let visitors = this.groups.get(keyId);
    let g = visitors?.get(visitor);
    if (!g) {
      const own = mode === 'test' ? this.test : kind === 'secret' ? this.secret : this.publishable;
      const buckets: Bucket[] =
        kind === 'secret'
          ? [{ policy: 'key', name: keyId, ...own }]
          : [
              { policy: 'client', name: `${keyId}:${visitor}`, ...this.publishableClient },
              { policy: 'key', name: keyId, ...own },
            ];
      if (this.groupCount >= GROUPS_MAX) {
        this.groups.clear();
        this.groupCount = 0;
        visitors = undefined;
      }
      if (!visitors) this.groups.set(keyId, (visitors = new Map()));
      g = this.newGroup(kind === 'secret' ? keyId : `${keyId}|${visitor}`, buckets);
      visitors.set(visitor, g);
      this.groupCount++;
    }
    return g;
  }

  /**
   * The answer when it needs no Redis round trip: a token from the lease, a refusal
   * still in force, or null when Redis is unreachable (fail open; Postgres still
   * guards revocation). undefined: ask `check`. With buckets in this process
   * (single-node mode) there is always an answer, and never null.
   *
   * A lease half spent is renewed in the background, so a steady stream of requests
   * never waits on Redis (a request that waits on a quiet gateway is also answered uncorked by
   * Bun: one send() per header piece; docs/design/serving.md, "Known limits"). Only a stream is:
   * a group used once (a publishable key's visitor who made one call, whose lease is one token)
   * renews nothing, or each such visitor would take a second token of the key's overall bucket
   * and leave it unspent.
   *
   *
   * `revokedKnown`: the call is refused as revoked already; it spends a token all the same,
   * and Redis's revoked marker is not asked (it would answer "revoked", and spend nothing).
   */
  peek(g: Group, keyHash: string, revokedKnown = false): LimitResult | null | undefined {
    const now = Date.now();
    if (g.left > 0 && g.expires > now) {
      g.left--;
      const streaming = now - g.lastUse < LEASE_MS;
      g.lastUse = now;
      if (streaming && g.left * 2 < g.lease && !g.pending && !this.store.takeNow && this.store.ready)
        this.renew(keyHash, g, revokedKnown);
      return { revoked: false, allowed: true, retryAfter: 0, headers: this.headersOf(g) };
    }
    // a store in this process (single-node mode) decides every request now, exactly
    if (this.store.takeNow) return this.spent(g, this.store.takeNow(keyHash, g.buckets, 1));
    if (g.deniedUntil > now) {
      return {
        revoked: false,
        allowed: false,
        retryAfter: Math.max(1, Math.ceil((g.deniedUntil - now) / 1000)),
        headers: this.headersOf(g),
      };
    }
    // Redis known to be away: admitted without a token, and said in the log (once a minute)
    if (!this.store.ready) return this.failOpen();
    return undefined;
  }

  /** One request's own token, taken in this process: admitted with it, or refused until the next one is due. */
  private spent(g: Group, t: Grant): LimitResult {
    g.remaining = t.remaining;
    g.full = t.full;
    g.deniedUntil = t.granted > 0 ? 0 : Date.now() + Math.max(t.nextMs, 1); // what `unknownKeyDenied` reads
    if (t.granted > 0) return { revoked: false, allowed: true, retryAfter: 0, headers: this.headersOf(g) };
    return {
      revoked: false,
      allowed: false,
      retryAfter: Math.max(1, Math.ceil(t.nextMs / 1000)),
      headers: this.headersOf(g),
    };
  }

  /** Background renewal: a revoked key's lease is dropped, so the next request asks `check` and learns it. */
  private renew(keyHash: string, g: Group, revokedKnown: boolean) {
    this.refillOnce(keyHash, g, revokedKnown).then((revoked) => {
      if (revoked) g.left = g.expires = 0;
    });
  }

  /** One Redis round trip per group at a time, shared by everyone who needs its answer. */
  private refillOnce(keyHash: string, g: Group, revokedKnown: boolean): Promise<boolean | null> {
    return (g.pending ??= this.refill(keyHash, g, revokedKnown).finally(() => (g.pending = null)));
  }

  /**
   * A request is admitted only with a token really taken from the shared bucket. Waiters
   * that lose a lease to each other ask again; after every token of MAX_ROUNDS leases went
   * to others, the request is refused (429), never let through. Only a limiter that cannot
   * decide (Redis unreachable: null) fails open, and says so in the log.
   */
  async check(keyHash: string, g: Group, revokedKnown = false): Promise<LimitResult | null> {
    g.waiting++;
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const known = this.peek(g, keyHash, revokedKnown);
        if (known !== undefined) return known ?? this.failOpen();
        const revoked = await this.refillOnce(keyHash, g, revokedKnown);
        if (revoked === null) return this.failOpen();
        if (revoked) return { revoked: true, allowed: false, headers: {}, retryAfter: 0 };
      }
      return { revoked: false, allowed: false, retryAfter: 1, headers: this.headersOf(g) };
    } finally {
      g.waiting--;
    }
  }

  /** Redis cannot decide: let the request through, logged at most once a minute so an outage is visible, not silent. */
  private failOpen(): null {
    const now = Date.now();
    if (now - this.failOpenLogged > 60_000) {
      this.failOpenLogged = now;
      log('warn', 'rate limits fail open: Redis is unreachable, requests are admitted without a token');
    }
    return null;
  }

  /** Asks the store for a lease; null when it cannot decide (Redis failure), true when the key is revoked. */
  private async refill(keyHash: string, g: Group, revokedKnown: boolean): Promise<boolean | null> {
    // as many tokens as requests wait (a burst of concurrent calls is one round trip, not one per lease's worth)
    const t = await this.store.take(keyHash, g.buckets, Math.max(g.lease, g.waiting), !revokedKnown);
    if (t === null) return null;
    if (t === 'revoked') return true;
    const now = Date.now();
    g.remaining = t.remaining;
    g.full = t.full;
    // tokens still unspent from the last lease stay usable: a renewal adds to them
    g.left = (g.expires > now ? g.left : 0) + t.granted;
    g.expires = now + LEASE_MS;
    g.deniedUntil = g.left > 0 ? 0 : now + Math.max(t.nextMs, 1);
    return false;
  }

  private headersOf(g: Group): Record<string, string> {
    let state = '';
    for (let i = 0; i < g.buckets.length; i++)
      state += `${g.named[i]}${Math.max(0, (g.remaining[i] ?? 0) + g.left)};t=${g.full[i] ?? 0}`;
    return { 'ratelimit-policy': g.policy, ratelimit: state };
  }
}
