import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { etagMatches, REQUEST_ID } from '@studio/shared';
import { HeldAnswer, KeptHeaders } from '../answer';
import { type AnsweredProblem, problemOf } from '../forward/proxy';
import { TieredCache } from './tiered';

/**
 * One representation of an answer: its body and headers, which every answer made from it shares. A kept one's body is
 * a Blob: a Response made of a Blob shares its bytes, where one made of a Uint8Array copies them on every hit.
 */
interface Rep {
  body: Blob | Uint8Array;
  headers: KeptHeaders;
}

/** An upstream answer as kept (or, for a non-cacheable one, as shared between the waiters of one fill). */
interface Snapshot {
  status: number;
  plain: Rep;
  /** The same answer compressed once at fill time, for the clients (every browser) that accept it. */
  gzip: Rep | null;
  br: Rep | null;
  etag: string | null;
  /** Kept for the entry's lifetime (a 200 with an ETag, within the size bound); else shared by one fill's waiters only. */
  kept: boolean;
  /** A problem answer's code and detail (never kept, only passed on), for each caller's activity entry. */
  problem?: AnsweredProblem | null;
  /** A problem answer's body, whose `instance` names the request that made the upstream call (`forWaiter`). */
  problemText?: string;
}

/**
 * A problem answer shared by the waiters of one upstream call, as this waiter's own: its `instance` names this
 * request (`urn:request:<id>`), not the first waiter's, whose request id the call was signed with.
 */
function forWaiter(snap: Snapshot, text: string, extra: Record<string, string>): HeldAnswer {
  let body = text;
  try {
    const p = JSON.parse(text) as { instance?: unknown };
    if (typeof p.instance === 'string' && p.instance.startsWith('urn:request:'))
      body = JSON.stringify({ ...p, instance: `urn:request:${extra[REQUEST_ID]}` });
  } catch {
    /* not JSON: passed on as it came */
  }
  return new HeldAnswer(snap.status, snap.plain.headers, extra, Buffer.from(body));
}

/** How long past its lifetime an entry may still be served while its refresh runs. */
const STALE_GRACE_MS = 30_000;

/** The codings an Accept-Encoding value allows, parsed once per distinct value (a handful per site). */
const codingsSeen = new Map<string, { br: boolean; gzip: boolean }>();

/** The value asked about last, and its codings: a browser's calls, and a site's visitors, mostly send one value. */
let lastAccepted = '';
let lastCodings = { br: false, gzip: false };

export function acceptedCodings(acceptEncoding: string | null): { br: boolean; gzip: boolean } {
  if (!acceptEncoding) return NONE;
  if (acceptEncoding === lastAccepted) return lastCodings;
  let known = codingsSeen.get(acceptEncoding);
  if (!known) {
    const q: Record<string, number> = {};
    for (const part of acceptEncoding.toLowerCase().split(',')) {
      const [coding = '', ...params] = part.split(';').map((x) => x.trim());
      const qv = params.find((x) => x.startsWith('q='));
      q[coding] = qv ? Number(qv.slice(2)) || 0 : 1;
    }
    const ok = (coding: string) => (q[coding] ?? q['*'] ?? 0) > 0;
    known = { br: ok('br'), gzip: ok('gzip') };
    if (codingsSeen.size >= 1000) codingsSeen.clear();
    codingsSeen.set(acceptEncoding, known);
  }
  lastAccepted = acceptEncoding;
  return (lastCodings = known);
}
const NONE = { br: false, gzip: false };

/** The representation for this client: brotli, then gzip, when it accepts them and they exist. */
function pick(snap: Snapshot, acceptEncoding: string | null): Rep {
  if (!snap.gzip && !snap.br) return snap.plain;
  const accepted = acceptedCodings(acceptEncoding);
  return (accepted.br && snap.br) || (accepted.gzip && snap.gzip) || snap.plain;
}

/**
 * One client's answer, held (the representation's bytes and headers, shared, with this request's own beside them):
 * compressed when it accepts it and it pays, 304 on a matching validator.
 */
function respondFrom(
  snap: Snapshot,
  ifNoneMatch: string | null,
  acceptEncoding: string | null,
  extra?: Record<string, string>,
): HeldAnswer {
  const rep = pick(snap, acceptEncoding);
  if (snap.etag && etagMatches(ifNoneMatch, snap.etag)) {
    const { 'content-type': _, 'content-encoding': __, 'content-length': ___, ...rest } = rep.headers.values;
    return new HeldAnswer(304, rest, extra ?? null, null);
  }
  return new HeldAnswer(snap.status, rep.headers, extra ?? null, rep.body);
}

/** Below this, compression saves less than its framing and CPU cost. */
const COMPRESS_MIN_BYTES = 1024;
const NO_BYTES = new Uint8Array(0);
/** Brotli quality 5: within 1 % of the best size of 9 at a fifth of its time (about 3 ms for 150 KB of JSON). */
const BROTLI = { params: { [zlib.BROTLI_PARAM_QUALITY]: 5, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT } };

function variants(bytes: Uint8Array, headers: Record<string, string>): Pick<Snapshot, 'plain' | 'gzip' | 'br'> {
  const vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding';
  // a copy (a Blob's): the answer's bytes are a view of what the socket read, which holds more than the body
  const plain: Rep = {
    body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
    headers: new KeptHeaders({ ...headers, vary }),
  };
  if (bytes.byteLength < COMPRESS_MIN_BYTES) return { plain, gzip: null, br: null };
  // a different representation needs a different strong validator; a weak one still matches If-None-Match,
  // and the compressed forms are semantically equivalent, so they share it
  const encoded = (coding: string, body: Uint8Array<ArrayBuffer>): Rep => ({
    body: new Blob([body]),
    headers: new KeptHeaders({
      ...plain.headers.values,
      'content-encoding': coding,
      ...(headers.etag ? { etag: `W/${headers.etag}` } : {}),
    }),
  });
  return {
    plain,
    gzip: encoded('gzip', Bun.gzipSync(bytes as Uint8Array<ArrayBuffer>)),
    br: encoded('br', brotliCompressSync(bytes, BROTLI) as Uint8Array<ArrayBuffer>),
  };
}

const KEPT_HEADERS = ['content-type', 'etag', 'cache-control', 'vary'] as const;

/** What an entry holds besides its bodies (key, headers, objects), counted against the byte bound: an estimate. */
const ENTRY_OVERHEAD_BYTES = 2048;
const repSize = (r: Rep | null) => (r ? (r.body instanceof Blob ? r.body.size : r.body.byteLength) : 0);
const sizeOf = (s: Snapshot) => repSize(s.plain) + repSize(s.gzip) + repSize(s.br) + ENTRY_OVERHEAD_BYTES;

/** Asks upstream for the answer, conditionally when `etag` is given (a 304 then means the kept one still holds). */
export type Loader = (etag: string | null) => Promise<HeldAnswer>;

export interface StorefrontCacheOptions {
  /** Bounds staleness for time-based content (classes start) and writes made outside any gateway. */
  ttlMs?: number;
  maxEntries?: number;
  maxEntriesPerStudio?: number;
  maxBodyBytes?: number;
  /** Bytes held in all, every representation counted (STOREFRONT_CACHE_MB); the oldest entries go first. */
  maxBytes?: number;
  /** Tells the other gateway replicas (Redis pub/sub) that a studio's Storefront data changed. */
  publish?: (studioId: string) => Promise<void>;
}

/**
 * Storefront 200 answers, a namespace of the gateway's tiered cache (memory only:
 * the service is the origin), keyed by studio + path + the operation's declared query
 * parameters (sorted), grouped by studio, bounded in bytes; expired entries are swept out. Consulted only after the key, rate limit and activity bookkeeping of the
 * request. Invalidation is immediate: a Management write through this gateway drops
 * the studio here and is broadcast to every replica; a replica whose subscription is
 * down (`enabled` false) neither serves nor stores, since it may be missing broadcasts.
 */
export class StorefrontCache {
  private cache: TieredCache<Snapshot>;
  private readonly maxBody: number;

  constructor(private o: StorefrontCacheOptions = {}) {
    const ttlMs = o.ttlMs ?? 5_000;
    this.maxBody = o.maxBodyBytes ?? 1024 * 1024;
    this.cache = new TieredCache<Snapshot>({
      // only a 200 with an ETag is kept; other answers are shared by the waiters of one fill, then gone
      freshMs: (snap) => (snap.kept ? ttlMs : 0),
      staleMs: STALE_GRACE_MS,
      maxEntries: o.maxEntries ?? 20_000,
      maxPerGroup: o.maxEntriesPerStudio ?? 1_000,
      groupOf: (id) => id.slice(0, id.indexOf('\n')),
      sizeOf,
      maxBytes: o.maxBytes ?? 64 * 1024 * 1024,
      // one studio holds a quarter at most: a caller cycling one site's query values evicts that site's answers, not
      // every other studio's
      maxBytesPerGroup: (o.maxBytes ?? 64 * 1024 * 1024) / 4,
    });
  }

  /** Bytes held now (never above `maxBytes`). */
  get bytes(): number {
    return this.cache.bytes;
  }

  /** Entries held now. */
  get size(): number {
    return this.cache.size;
  }

  get enabled(): boolean {
    return this.cache.enabled;
  }

  set enabled(live: boolean) {
    this.cache.enabled = live;
  }

  /**
   * `/v1/classes?level=x&from=y` and `?from=y&level=x` are one entry. With `declared` (the
   * operation's query parameters), any other parameter is left out: the service ignores it,
   * so `&bust=N` cannot make one answer into many entries.
   */
  static keyOf(pathAndQuery: string, declared?: ReadonlySet<string>): string {
    const q = pathAndQuery.indexOf('?');
    if (q < 0 || q === pathAndQuery.length - 1 || declared?.size === 0)
      return q < 0 ? pathAndQuery : pathAndQuery.slice(0, q);
    let params = new URLSearchParams(pathAndQuery.slice(q + 1));
    if (declared) {
      // the declared ones only, each once with its last value, as the service reads a repeated one: in one pass (a
      // `delete` per unknown name scanned the whole list each time, a cost that grew with the square of their number)
      const kept = new URLSearchParams();
      for (const [name, value] of params) if (declared.has(name)) kept.set(name, value);
      params = kept;
    }
    params.sort();
    const query = params.toString();
    return query ? `${pathAndQuery.slice(0, q)}?${query}` : pathAndQuery.slice(0, q);
  }

  /** A ready answer (200, or 304 on a matching If-None-Match), or null to go upstream. */
  lookup(
    studioId: string,
    key: string,
    ifNoneMatch: string | null,
    acceptEncoding: string | null = null,
    extra?: Record<string, string>,
  ): HeldAnswer | null {
    const snap = this.cache.peek(`${studioId}\n${key}`);
    return snap ? respondFrom(snap, ifNoneMatch, acceptEncoding, extra) : null;
  }

  /**
   * An entry past its lifetime but within the grace period, served while one refresh
   * runs (`fill`), so an expiry never sends every waiting client upstream at once.
   * Never a dropped entry: a write removes entries outright.
   */
  stale(
    studioId: string,
    key: string,
    ifNoneMatch: string | null,
    acceptEncoding: string | null,
    extra?: Record<string, string>,
  ): HeldAnswer | null {
    const snap = this.cache.peekStale(`${studioId}\n${key}`);
    return snap ? respondFrom(snap, ifNoneMatch, acceptEncoding, extra) : null;
  }

  /**
   * Refreshes a stale entry (`stale`) unless a refresh of it runs already. The one that starts is `fill`'s; the others
   * return at once, holding nothing: under a flood of stale hits (a pipelined one, when the event loop turns slowly)
   * a frame waiting on the refresh per hit kept each hit's request and context alive until the refresh ended, over
   * 100,000 of them (docs/design/serving.md, "Known limits").
   */
  refresh(studioId: string, key: string, load: () => Loader): Promise<HeldAnswer> | null {
    const id = `${studioId}\n${key}`;
    return this.cache.filling(id) ? null : this.fill(studioId, key, null, null, load());
  }

  /**
   * Single flight: concurrent misses of one entry share one upstream call (`load`),
   * and each gets its own response from the shared answer. An entry being refreshed
   * is revalidated: unchanged data comes back as a 304, with nothing to compress again.
   */
  async fill(
    studioId: string,
    key: string,
    ifNoneMatch: string | null,
    acceptEncoding: string | null,
    load: Loader,
    extra?: Record<string, string>,
    onProblem?: (p: AnsweredProblem) => void,
  ): Promise<HeldAnswer> {
    const id = `${studioId}\n${key}`;
    const snap = await this.cache.fill(id, async (previous) => {
      const token = this.cache.token();
      const res = await load(previous?.etag ?? null);
      if (res.status !== 304 || !previous) return this.snapshot(res);
      // a write landed meanwhile and the 304 may predate it: ask again, in full
      return this.cache.stillValid(id, token) ? previous : this.snapshot(await load(null));
    });
    if (snap.problem) onProblem?.(snap.problem);
    if (snap.problemText !== undefined && extra?.[REQUEST_ID]) return forWaiter(snap, snap.problemText, extra);
    return respondFrom(snap, ifNoneMatch, acceptEncoding, extra);
  }

  /** An upstream answer as kept (a 200 with an ETag, within the size bound) or as passed on once. */
  private snapshot(res: HeldAnswer): Snapshot {
    const bytes = (res.body as Uint8Array | null) ?? NO_BYTES; // a load's answer is the hop's: its bytes as read
    // a load's answer is the hop's, with no headers of the gateway's (`extra`)
    const all = res.own instanceof KeptHeaders ? res.own.values : res.own;
    const etag = all.etag ?? null;
    if (res.status !== 200 || !etag || bytes.byteLength > this.maxBody) {
      const problem = res.status >= 400 ? problemOf(bytes) : null;
      const problemText = problem ? new TextDecoder().decode(bytes) : undefined;
      return {
        status: res.status,
        plain: { body: bytes, headers: new KeptHeaders(all) },
        gzip: null,
        br: null,
        // a 200 too large to keep still answers a matching If-None-Match with 304 (its ETag is the service's)
        etag: res.status === 200 ? etag : null,
        kept: false,
        problem,
        problemText,
      };
    }
    const kept: Record<string, string> = {};
    for (const h of KEPT_HEADERS) if (all[h] !== undefined) kept[h] = all[h]!;
    return { status: 200, ...variants(bytes, kept), etag, kept: true };
  }

  /** Keeps a 200 with an ETag (unless the studio changed since `token`); returns the answer to send. */
  store(
    studioId: string,
    key: string,
    token: number,
    res: HeldAnswer,
    acceptEncoding: string | null = null,
  ): HeldAnswer {
    const snap = this.snapshot(res);
    this.cache.put(`${studioId}\n${key}`, snap, token);
    return respondFrom(snap, null, acceptEncoding);
  }

  /** Taken just before going upstream; `store` refuses the answer if the studio changed since. */
  token(): number {
    return this.cache.token();
  }

  /** This studio's Storefront data changed (a broadcast from any replica). */
  drop(studioId: string) {
    this.cache.drop(studioId);
  }

  /** A Management write passed through this gateway: drop locally now, then tell the other replicas. */
  async changed(studioId: string) {
    this.drop(studioId);
    await this.o.publish?.(studioId);
  }

  flush() {
    this.cache.flush();
  }
}
