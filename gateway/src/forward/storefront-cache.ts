import { etagMatches } from '@studio/shared';

interface Entry {
  body: ArrayBuffer;
  headers: Record<string, string>;
  /** The same answer gzipped once at fill time, for the clients (every browser) that accept it. */
  gzip: Uint8Array<ArrayBuffer> | null;
  gzipHeaders: Record<string, string>;
  etag: string;
  expires: number;
}

/** Below this, gzip saves less than its framing and CPU cost. */
const GZIP_MIN_BYTES = 1024;

export const acceptsGzip = (acceptEncoding: string | null) => !!acceptEncoding && /\bgzip\b(?!;q=0(\.0*)?(,|$))/i.test(acceptEncoding);

function variants(body: ArrayBuffer, headers: Record<string, string>): { plain: Record<string, string>; gzip: Uint8Array<ArrayBuffer> | null; gzipHeaders: Record<string, string> } {
  const vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding';
  const plain: Record<string, string> = { ...headers, vary };
  if (body.byteLength < GZIP_MIN_BYTES) return { plain, gzip: null, gzipHeaders: plain };
  // a different representation needs a different strong validator; a weak one still matches If-None-Match
  const gzipHeaders = { ...plain, 'content-encoding': 'gzip', ...(headers.etag ? { etag: `W/${headers.etag}` } : {}) };
  return { plain, gzip: Bun.gzipSync(new Uint8Array(body)) as Uint8Array<ArrayBuffer>, gzipHeaders };
}

const KEPT_HEADERS = ['content-type', 'etag', 'cache-control', 'vary'] as const;

export interface StorefrontCacheOptions {
  /** Bounds staleness for time-based content (classes start) and writes made outside any gateway. */
  ttlMs?: number;
  maxEntries?: number;
  maxEntriesPerStudio?: number;
  maxBodyBytes?: number;
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
  lookup(studioId: string, key: string, ifNoneMatch: string | null, acceptEncoding: string | null = null): Response | null {
    if (!this.enabled) return null;
    const entry = this.studios.get(studioId)?.get(key);
    if (!entry) return null;
    if (entry.expires <= Date.now()) {
      this.remove(studioId, key);
      return null;
    }
    const gzip = entry.gzip && acceptsGzip(acceptEncoding);
    const headers = gzip ? entry.gzipHeaders : entry.headers;
    if (etagMatches(ifNoneMatch, entry.etag)) {
      const { 'content-type': _, 'content-encoding': __, ...rest } = headers;
      return new Response(null, { status: 304, headers: rest });
    }
    return new Response(gzip ? entry.gzip : entry.body, { status: 200, headers });
  }

  /** Taken just before going upstream; `store` refuses the answer if the studio changed since. */
  token(): number {
    return this.clock;
  }

  /** Keeps a 200 with an ETag; returns the response to send (its body is re-wrapped, not re-read by the caller). */
  async store(studioId: string, key: string, token: number, res: Response, acceptEncoding: string | null = null): Promise<Response> {
    const etag = res.headers.get('etag');
    if (res.status !== 200 || !etag || !this.enabled) return res;
    const body = await res.arrayBuffer();
    const kept: Record<string, string> = {};
    for (const h of KEPT_HEADERS) {
      const v = res.headers.get(h);
      if (v !== null) kept[h] = v;
    }
    const { plain: headers, gzip, gzipHeaders } = variants(body, kept);
    const fresh = this.flushedAt <= token && (this.droppedAt.get(studioId) ?? 0) <= token;
    if (fresh && body.byteLength <= this.maxBody) {
      if (this.size >= this.maxEntries) this.flush(); // crude, but bounded: a flood of distinct queries only costs misses
      let entries = this.studios.get(studioId);
      if (!entries) this.studios.set(studioId, (entries = new Map()));
      if (!entries.has(key)) {
        if (entries.size >= this.maxPerStudio) this.remove(studioId, entries.keys().next().value!);
        this.size++;
      }
      entries.set(key, { body, headers, gzip, gzipHeaders, etag, expires: Date.now() + this.ttlMs });
    }
    const out = new Headers(res.headers);
    const use = gzip && acceptsGzip(acceptEncoding) ? gzipHeaders : headers;
    for (const h in use) out.set(h, use[h]!);
    return new Response(use === gzipHeaders && gzip ? gzip : body, { status: res.status, headers: out });
  }

  /** 304 for a 200 whose ETag the caller already holds (the upstream was asked unconditionally). */
  static conditional(res: Response, ifNoneMatch: string | null): Response {
    const etag = res.headers.get('etag');
    if (res.status !== 200 || !etag || !etagMatches(ifNoneMatch, etag)) return res;
    const headers = new Headers(res.headers);
    headers.delete('content-type');
    return new Response(null, { status: 304, headers });
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
