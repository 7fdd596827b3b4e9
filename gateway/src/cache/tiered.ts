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
  /** Keys belong to groups (a studio) that can be dropped at once; by default each key is its own. */
  groupOf?(key: string): string;
  maxPerGroup?: number;
  shared?: SharedTier<V>;
  onRead?(tier: CacheTier): void;
}

/** Loads a value from the origin; `previous` is what memory holds (to revalidate, e.g. with its ETag). */
export type Origin<V> = (previous: V | undefined) => Promise<V>;

interface Kept<V> {
  value: V;
  fresh: number;
  stale: number;
}

export class TieredCache<V> {
  private trusted = false;
  private kept = new Map<string, Kept<V>>();
  private groups = new Map<string, Set<string>>();
  private flights = new Map<string, Promise<V>>();
  private clock = 0;
  private changedAt = new Map<string, number>();
  private flushedAt = 0;

  constructor(private o: TieredOptions<V>) {}

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
    const k = this.kept.get(key);
    if (!k) return undefined;
    if (k.fresh > Date.now()) return k.value;
    if (k.stale <= Date.now()) this.remove(key);
    return undefined;
  }

  /** A value past fresh but within its stale window (serve it, and `refresh`), or undefined. */
  peekStale(key: string): V | undefined {
    if (!this.trusted) return undefined;
    const k = this.kept.get(key);
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
      value = await origin(this.kept.get(key)?.value);
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
    return this.trusted && this.flushedAt <= token && (this.changedAt.get(this.groupOf(key)) ?? 0) <= token;
  }

  /** Keeps `value` read under `token`, unless it changed since or `freshMs` says not to. */
  put(key: string, value: V, token: number): void {
    const freshMs = this.o.freshMs(value);
    if (freshMs <= 0 || !this.stillValid(key, token)) return;
    if (!this.kept.has(key) && this.kept.size >= this.o.maxEntries) this.remove(this.kept.keys().next().value!);
    const group = this.groupOf(key);
    let members = this.groups.get(group);
    if (!members) this.groups.set(group, (members = new Set()));
    if (!members.has(key) && this.o.maxPerGroup && members.size >= this.o.maxPerGroup) this.remove(members.values().next().value!);
    members.add(key);
    const now = Date.now();
    this.kept.delete(key); // re-inserted last: the Map's order is the eviction order
    this.kept.set(key, { value, fresh: now + freshMs, stale: now + freshMs + this.o.staleMs });
  }

  /** This key changed: forget it, refuse fills that started before now, let no later caller join them. */
  evict(key: string): void {
    this.drop(this.groupOf(key));
  }

  /** Every key of the group changed (e.g. a studio's Storefront data). */
  drop(group: string): void {
    if (this.changedAt.size >= 100_000) return this.flush();
    this.changedAt.set(group, ++this.clock);
    for (const key of this.groups.get(group) ?? []) this.kept.delete(key);
    this.groups.delete(group);
    for (const key of this.flights.keys()) if (this.groupOf(key) === group) this.flights.delete(key);
  }

  flush(): void {
    this.flushedAt = ++this.clock;
    this.changedAt.clear();
    this.kept.clear();
    this.groups.clear();
    this.flights.clear();
  }

  private groupOf(key: string): string {
    return this.o.groupOf ? this.o.groupOf(key) : key;
  }

  private remove(key: string): void {
    this.kept.delete(key);
    const group = this.groupOf(key);
    const members = this.groups.get(group);
    if (members?.delete(key) && !members.size) this.groups.delete(group);
  }
}
