/**
 * One generic read-through cache for the gateway: memory, then an optional shared
 * tier (Redis), then the origin (Postgres, or a service), with negative entries,
 * stale-while-revalidate and single flight. The key resolver and the Storefront
 * answer cache are two namespaces of it. Model: Unkey `apps/api/src/pkg/cache/tiered.ts`.
 *
 * Memory (and the shared tier) are trusted only while `enabled`, i.e. while the
 * invalidation broadcasts that keep them honest are arriving; until then every read
 * goes to the origin. Every fill carries a token taken before it asked: an eviction,
 * a group drop or a flush after the token refuses to keep what it read, so a read
 * racing a write never parks pre-write data, and callers arriving after the change
 * never join a flight that started before it.
 */

/** What a read was answered from (for metrics). */
export type CacheTier = 'memory' | 'stale' | 'shared' | 'origin';

/** A tier shared by every replica. `get` answers undefined for a miss, or for a value it does not trust. */
export interface SharedTier<V> {
  get(key: string): Promise<V | undefined>;
  /** Offer a value just read from the origin (the tier may refuse it). */
  set(key: string, value: V): Promise<void>;
}

export interface TieredOptions<V> {
  /** How long a value stays fresh in memory (e.g. shorter for a negative entry); 0: returned but not kept. */
  freshMs(value: V): number;
  /** Past fresh, how long a value is still served while one refresh runs (0: never). */
  staleMs: number;
  maxEntries: number;
  /**
   * Values of a second kind (negative entries: unknown keys) kept apart under their own cap, so a
   * flood of them cannot evict the others (live keys).
   */
  apart?: { is(value: V): boolean; maxEntries: number };
  /** What a value holds in memory, in bytes; with `maxBytes`, the oldest entries go until the total fits. */
  sizeOf?(value: V): number;
  maxBytes?: number;
  /** How often expired entries are swept out (default 5 s); nothing is swept while nothing is kept. */
  sweepMs?: number;
  /** Keys belong to groups (a studio) that can be dropped at once; by default each key is its own. */
  groupOf?(key: string): string;
  maxPerGroup?: number;
  /** Bytes one group may hold (a studio's share of `maxBytes`): its own oldest go first, never another group's. */
  maxBytesPerGroup?: number;
  shared?: SharedTier<V>;
  onRead?(tier: CacheTier): void;
}

/** Loads a value from the origin; `previous` is what memory holds (to revalidate, e.g. with its ETag). */
export type Origin<V> = (previous: V | undefined) => Promise<V>;

interface Kept<V> {
  value: V;
  fresh: number;
  stale: number;
  /** `sizeOf(value)`, counted in `bytes` while kept. */
  size: number;
}

export class TieredCache<V> {
  private trusted = false;
  /** Map order is eviction order (oldest first); `apartKept` holds the values of `o.apart`. */
  private kept = new Map<string, Kept<V>>();
  private apartKept = new Map<string, Kept<V>>();
  private groups = new Map<string, Set<string>>();
  /** Bytes held per group (only with `maxBytesPerGroup`). */
  private groupBytes = new Map<string, number>();
  private flights = new Map<string, Promise<V>>();
  private clock = 0;
  /** Group -> the clock of its last change, oldest first (re-inserted on each change). */
  private changedAt = new Map<string, number>();
  private flushedAt = 0;
  /** Changes at or before this clock were forgotten (`sweep`): a fill whose token is older is not kept. */
  private forgottenBefore = 0;
  private clockAtSweep = 0;
  private sweeper: ReturnType<typeof setTimeout> | null = null;
  private held = 0;

  constructor(private o: TieredOptions<V>) {}

  /** Sum of the kept values' `sizeOf` (at most `maxBytes`). */
  get bytes(): number {
    return this.held;
  }

  /** Entries kept (both kinds). */
  get size(): number {
    return this.kept.size + this.apartKept.size;
  }

  /** Changes remembered for fills in flight (bounded by `sweep`). */
  get changes(): number {
    return this.changedAt.size;
  }

  get enabled(): boolean {
    return this.trusted;
  }

  /** Trust memory from now on (true), or stop (false); either way what was kept is forgotten. */
  set enabled(live: boolean) {
    this.flush();
    this.trusted = live;
  }

  /** The fresh value in memory, synchronously, or undefined. */
  peek(key: string): V | undefined {
    if (!this.trusted) return undefined;
    const k = this.kept.get(key) ?? (this.o.apart ? this.apartKept.get(key) : undefined);
    if (!k) return undefined;
    if (k.fresh > Date.now()) return k.value;
    if (k.stale <= Date.now()) this.remove(key);
    return undefined;
  }

  /** A value past fresh but within its stale window (serve it, and `refresh`), or undefined. */
  peekStale(key: string): V | undefined {
    if (!this.trusted) return undefined;
    const k = this.kept.get(key) ?? (this.o.apart ? this.apartKept.get(key) : undefined);
    return k && k.stale > Date.now() ? k.value : undefined;
  }

  /** Fresh from memory; stale from memory while one refresh runs; else from the shared tier or the origin. */
  async get(key: string, origin: Origin<V>): Promise<V> {
    const fresh = this.peek(key);
    if (fresh !== undefined) {
      this.o.onRead?.('memory');
      return fresh;
    }
    const stale = this.peekStale(key);
    if (stale !== undefined) {
      this.o.onRead?.('stale');
      this.refresh(key, origin);
      return stale;
    }
    return this.fill(key, origin);
  }

  /** Starts (or joins) the fill of `key` in the background. */
  refresh(key: string, origin: Origin<V>): void {
    this.fill(key, origin).catch(() => {}); // the stale value stays until its window ends
  }

  /** Whether a fill of `key` is running (`fill`, `refresh`). */
  filling(key: string): boolean {
    return this.flights.has(key);
  }

  /** Single flight: concurrent callers of one key share one shared-tier read and at most one origin call. */
  fill(key: string, origin: Origin<V>): Promise<V> {
    let flight = this.flights.get(key);
    if (!flight) {
      flight = this.load(key, origin).finally(() => {
        if (this.flights.get(key) === flight) this.flights.delete(key);
      });
      this.flights.set(key, flight);
    }
    return flight;
  }

  private async load(key: string, origin: Origin<V>): Promise<V> {
    const token = this.token();
    const shared = this.trusted ? this.o.shared : undefined;
    let value = shared ? await shared.get(key).catch(() => undefined) : undefined;
    if (value !== undefined) this.o.onRead?.('shared');
    else {
      value = await origin((this.kept.get(key) ?? this.apartKept.get(key))?.value);
      this.o.onRead?.('origin');
      // offered in the background: the caller does not wait on the shared tier's write
      if (shared && this.stillValid(key, token)) shared.set(key, value).catch(() => {});
    }
    this.put(key, value, token);
    return value;
  }

  /** The token a fill takes before it asks; `put` refuses a value if anything changed since. */
  token(): number {
    return this.clock;
  }

  stillValid(key: string, token: number): boolean {
    return (
      this.trusted &&
      this.flushedAt <= token &&
      this.forgottenBefore <= token &&
      (this.changedAt.get(this.groupOf(key)) ?? 0) <= token
    );
  }

  /** Keeps `value` read under `token`, unless it changed since or `freshMs` says not to. */
  put(key: string, value: V, token: number): void {
    const freshMs = this.o.freshMs(value);
    if (freshMs <= 0 || !this.stillValid(key, token)) return;
    this.remove(key); // re-inserted last: the Map's order is the eviction order
    const size = this.o.sizeOf?.(value) ?? 0;
    const maxBytes = this.o.maxBytes ?? Infinity;
    if (size > maxBytes) return;
    const apart = this.o.apart?.is(value) ?? false;
    const pool = apart ? this.apartKept : this.kept;
    if (pool.size >= (apart ? this.o.apart!.maxEntries : this.o.maxEntries)) this.remove(pool.keys().next().value!);
    while (this.held + size > maxBytes) {
      const oldest = pool.keys().next().value ?? (apart ? this.kept : this.apartKept).keys().next().value;
      if (oldest === undefined) break;
      this.remove(oldest);
    }
    const group = this.groupOf(key);
    const before = this.groups.get(group);
    if (this.o.maxPerGroup && before && before.size >= this.o.maxPerGroup) this.remove(before.values().next().value!);
    this.fitGroup(group, size);
    // taken again: a group emptied by the removals above is gone from `groups`
    let members = this.groups.get(group);
    if (!members) this.groups.set(group, (members = new Set()));
    members.add(key);
    if (this.o.maxBytesPerGroup) this.groupBytes.set(group, (this.groupBytes.get(group) ?? 0) + size);
    const now = Date.now();
    pool.set(key, { value, fresh: now + freshMs, stale: now + freshMs + this.o.staleMs, size });
    this.held += size;
    this.sweepLater();
  }

  /** This key changed: forget it, refuse fills that started before now, let no later caller join them. */
  evict(key: string): void {
    this.drop(this.groupOf(key));
  }

  /** Every key of the group changed (e.g. a studio's Storefront data). */
  drop(group: string): void {
    if (this.changedAt.size >= 100_000) {
      this.flush();
      return;
    }
    this.changedAt.delete(group); // re-inserted last: oldest change first, for `sweep`
    this.changedAt.set(group, ++this.clock);
    for (const key of this.groups.get(group) ?? []) this.remove(key);
    for (const key of this.flights.keys()) if (this.groupOf(key) === group) this.flights.delete(key);
    this.sweepLater();
  }

  flush(): void {
    this.flushedAt = ++this.clock;
    this.changedAt.clear();
    this.kept.clear();
    this.apartKept.clear();
    this.held = 0;
    this.groups.clear();
    this.groupBytes.clear();
    this.flights.clear();
  }

  /**
   * Drops what expired, so memory is given back without waiting for a read or an eviction,
   * and forgets changes older than the previous sweep (a fill that started before then is
   * not kept instead). Each kind of entry has one lifetime (every put re-inserts at the
   * end), so the expired ones are at the front of its Map: a sweep costs what it drops.
   */
  sweep(now = Date.now()): void {
    this.sweeper = null;
    for (const pool of [this.kept, this.apartKept]) {
      for (const [key, k] of pool) {
        if (k.stale > now) break;
        this.remove(key);
      }
    }
    const forget = this.clockAtSweep;
    for (const [group, at] of this.changedAt) {
      if (at > forget) break;
      this.changedAt.delete(group);
    }
    this.forgottenBefore = Math.max(this.forgottenBefore, forget);
    this.clockAtSweep = this.clock;
    this.sweepLater();
  }

  /** A timer only while something is kept or remembered, and one that never holds the process open. */
  private sweepLater(): void {
    if (this.sweeper || !(this.kept.size || this.apartKept.size || this.changedAt.size)) return;
    this.sweeper = setTimeout(() => this.sweep(), this.o.sweepMs ?? 5_000);
    this.sweeper.unref?.();
  }

  private groupOf(key: string): string {
    return this.o.groupOf ? this.o.groupOf(key) : key;
  }

  /** Room in its group's byte share for `size` more: the group's own oldest entries go (a studio filling its share evicts its own). */
  private fitGroup(group: string, size: number): void {
    const max = this.o.maxBytesPerGroup;
    if (!max) return;
    const members = this.groups.get(group);
    while (members?.size && (this.groupBytes.get(group) ?? 0) + size > max) this.remove(members.values().next().value!);
  }

  private remove(key: string): void {
    const k = this.kept.get(key) ?? this.apartKept.get(key);
    if (!k) return;
    if (!this.kept.delete(key)) this.apartKept.delete(key);
    this.held -= k.size;
    const group = this.groupOf(key);
    const members = this.groups.get(group);
    if (members?.delete(key) && !members.size) this.groups.delete(group);
    if (this.o.maxBytesPerGroup) {
      const left = (this.groupBytes.get(group) ?? 0) - k.size;
      if (left > 0) this.groupBytes.set(group, left);
      else this.groupBytes.delete(group);
    }
  }
}
