import { etagMatches } from '@studio/shared';

/** An upstream answer as kept (or, for a non-cacheable one, as shared between the waiters of one fill). */
interface Snapshot {
  status: number;
  /** Blobs: every response shares the bytes instead of copying them (a copy per hit is garbage per hit). */
  body: Blob;
  headers: Record<string, string>;
  /** The same answer gzipped once at fill time, for the clients (every browser) that accept it. */
  gzip: Blob | null;
  gzipHeaders: Record<string, string>;
  etag: string | null;
}
interface Entry extends Snapshot {
  etag: string;
  expires: number;
}

/** How long past its lifetime an entry may still be served while its refresh runs. */
const STALE_GRACE_MS = 30_000;

/** A fresh Response for one client: gzip when it accepts it and it pays, 304 on a matching validator. */
function respondFrom(snap: Snapshot, ifNoneMatch: string | null, acceptEncoding: string | null, extra?: Record<string, string>): Response {
  const gzip = snap.gzip !== null && acceptsGzip(acceptEncoding);
  const kept = gzip ? snap.gzipHeaders : snap.headers;
  // one construction with every header: cheaper than building, then setting
  const headers = extra ? { ...kept, ...extra } : kept;
  if (snap.etag && etagMatches(ifNoneMatch, snap.etag)) {
    const { 'content-type': _, 'content-encoding': __, 'content-length': ___, ...rest } = headers;
    return new Response(null, { status: 304, headers: rest });
  }
  return new Response(gzip ? snap.gzip : snap.body, { status: snap.status, headers });
}

/** Below this, gzip saves less than its framing and CPU cost. */
const GZIP_MIN_BYTES = 1024;

export const acceptsGzip = (acceptEncoding: string | null) => !!acceptEncoding && /\bgzip\b(?!;q=0(\.0*)?(,|$))/i.test(acceptEncoding);

function variants(body: ArrayBuffer, headers: Record<string, string>): { plain: Record<string, string>; gzip: Blob | null; gzipHeaders: Record<string, string> } {
  const vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding';
  const plain: Record<string, string> = { ...headers, vary };
  if (body.byteLength < GZIP_MIN_BYTES) return { plain, gzip: null, gzipHeaders: plain };
  // a different representation needs a different strong validator; a weak one still matches If-None-Match
  const gzipHeaders = { ...plain, 'content-encoding': 'gzip', ...(headers.etag ? { etag: `W/${headers.etag}` } : {}) };
  return { plain, gzip: new Blob([Bun.gzipSync(new Uint8Array(body))]), gzipHeaders };
}

const KEPT_HEADERS = ['content-type', 'etag', 'cache-control', 'vary'] as const;

export interface StorefrontCacheOptions {
  /** Bounds staleness for time-based content (classes start) and writes made outside any gateway. */
  ttlMs?: number;
  maxEntries?: number;
  maxEntriesPerStudio?: number;
  maxBodyBytes?: number;
  /** Fixed headers of every cached answer (the surface's CORS headers), merged in once at fill time. */
  headers?: Record<string, string>;
  /** Tells the other gateway replicas (Redis pub/sub) that a studio's Storefront data changed. */
  publish?: (studioId: string) => Promise<void>;
}

/**
 * In-process cache of Storefront 200 answers, keyed by studio + path + normalized query,
 * consulted only after the key, rate limit and activity bookkeeping of the request.
 * Invalidation is immediate: a Management write through this gateway drops the studio
 * here and is broadcast to every replica; a replica whose subscription is down
 * (`enabled` false) neither serves nor stores, since it may be missing broadcasts.
 *
 * Each fill carries a token taken before the upstream call; a drop or flush after it
 * refuses the fill, so a read racing a write can never park pre-write data.
 */
export class StorefrontCache {
  enabled = false;
  private studios = new Map<string, Map<string, Entry>>();
  private flights = new Map<string, Promise<Snapshot>>();
  private size = 0;
  private clock = 0;
  private droppedAt = new Map<string, number>();
  private flushedAt = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly maxPerStudio: number;
  private readonly maxBody: number;

  constructor(private o: StorefrontCacheOptions = {}) {
    this.ttlMs = o.ttlMs ?? 5_000;
    this.maxEntries = o.maxEntries ?? 20_000;
    this.maxPerStudio = o.maxEntriesPerStudio ?? 1_000;
    this.maxBody = o.maxBodyBytes ?? 1024 * 1024;
  }

  /** `/v1/classes?level=x&from=y` and `?from=y&level=x` are one entry. */
  static keyOf(pathAndQuery: string): string {
    const q = pathAndQuery.indexOf('?');
    if (q < 0 || q === pathAndQuery.length - 1) return q < 0 ? pathAndQuery : pathAndQuery.slice(0, q);
    const params = new URLSearchParams(pathAndQuery.slice(q + 1));
    params.sort();
    return `${pathAndQuery.slice(0, q)}?${params}`;
  }

  /** A ready answer (200, or 304 on a matching If-None-Match), or null to go upstream. */
  lookup(studioId: string, key: string, ifNoneMatch: string | null, acceptEncoding: string | null = null, extra?: Record<string, string>): Response | null {
    if (!this.enabled) return null;
    const entry = this.studios.get(studioId)?.get(key);
    if (!entry) return null;
    if (entry.expires <= Date.now()) {
      if (entry.expires + STALE_GRACE_MS <= Date.now()) this.remove(studioId, key);
      return null;
    }
    return respondFrom(entry, ifNoneMatch, acceptEncoding, extra);
  }

  /**
   * An entry past its lifetime but within the grace period, served while one refresh
   * runs (`fill`), so an expiry never sends every waiting client upstream at once.
   * Never a dropped entry: a write removes entries outright.
   */
  stale(studioId: string, key: string, ifNoneMatch: string | null, acceptEncoding: string | null, extra?: Record<string, string>): Response | null {
    if (!this.enabled) return null;
    const entry = this.studios.get(studioId)?.get(key);
    if (!entry || entry.expires + STALE_GRACE_MS <= Date.now()) return null;
    return respondFrom(entry, ifNoneMatch, acceptEncoding, extra);
  }

  /**
   * Single flight: concurrent misses of one entry share one upstream call (`load`),
   * and each gets its own response from the shared answer.
   */
  async fill(studioId: string, key: string, ifNoneMatch: string | null, acceptEncoding: string | null, load: () => Promise<Response>, extra?: Record<string, string>): Promise<Response> {
    const id = `${studioId}\n${key}`;
    let flight = this.flights.get(id);
    if (!flight) {
      const token = this.token();
      flight = load()
        .then((res) => this.keep(studioId, key, token, res))
        .finally(() => this.flights.delete(id));
      this.flights.set(id, flight);
    }
    return respondFrom(await flight, ifNoneMatch, acceptEncoding, extra);
  }

  /** Snapshot of an upstream answer, kept when it is a 200 with an ETag and nothing changed since `token`. */
  private async keep(studioId: string, key: string, token: number, res: Response): Promise<Snapshot> {
    const bytes = await res.arrayBuffer();
    const body = new Blob([bytes]);
    const all: Record<string, string> = { ...this.o.headers };
    res.headers.forEach((v, k) => (all[k] = v));
    const etag = res.headers.get('etag');
    if (res.status !== 200 || !etag || !this.enabled) return { status: res.status, body, headers: all, gzip: null, gzipHeaders: all, etag: null };
    const kept: Record<string, string> = { ...this.o.headers };
    for (const h of KEPT_HEADERS) if (all[h] !== undefined) kept[h] = all[h]!;
    const { plain, gzip, gzipHeaders } = variants(bytes, kept);
    const entry: Entry = { status: 200, body, headers: plain, gzip, gzipHeaders, etag, expires: Date.now() + this.ttlMs };
    const fresh = this.flushedAt <= token && (this.droppedAt.get(studioId) ?? 0) <= token;
    if (fresh && bytes.byteLength <= this.maxBody) this.put(studioId, key, entry);
    return entry;
  }

  private put(studioId: string, key: string, entry: Entry) {
    if (this.size >= this.maxEntries) this.flush(); // crude, but bounded: a flood of distinct queries only costs misses
    let entries = this.studios.get(studioId);
    if (!entries) this.studios.set(studioId, (entries = new Map()));
    if (!entries.has(key)) {
      if (entries.size >= this.maxPerStudio) this.remove(studioId, entries.keys().next().value!);
      this.size++;
    }
    entries.set(key, entry);
  }

  /** Taken just before going upstream; `store` refuses the answer if the studio changed since. */
  token(): number {
    return this.clock;
  }

  /** Keeps a 200 with an ETag (unless the studio changed since `token`); returns the response to send. */
  async store(studioId: string, key: string, token: number, res: Response, acceptEncoding: string | null = null): Promise<Response> {
    return respondFrom(await this.keep(studioId, key, token, res), null, acceptEncoding);
  }

  /** This studio's Storefront data changed (a broadcast from any replica). */
  drop(studioId: string) {
    this.droppedAt.set(studioId, ++this.clock);
    const entries = this.studios.get(studioId);
    if (entries) {
      this.size -= entries.size;
      this.studios.delete(studioId);
    }
  }

  /** A Management write passed through this gateway: drop locally now, then tell the other replicas. */
  async changed(studioId: string) {
    this.drop(studioId);
    await this.o.publish?.(studioId);
  }

  flush() {
    this.flushedAt = ++this.clock;
    this.droppedAt.clear();
    this.studios.clear();
    this.size = 0;
  }

  private remove(studioId: string, key: string) {
    const entries = this.studios.get(studioId);
    if (entries?.delete(key)) this.size--;
  }
}
