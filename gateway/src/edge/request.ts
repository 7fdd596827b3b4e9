/**
 * A request as the edge hands it to a surface: what llhttp parsed, read the way the pipeline reads a Request
 * (`url`, `method`, `headers.get` and `headers.forEach`), with no Request or Headers object made for it.
 */
import type { EdgeBody } from './body';

/** What the pipeline reads of a request: a Request, or an EdgeRequest. */
export interface Incoming {
  readonly url: string;
  readonly method: string;
  readonly headers: { get(name: string): string | null; forEach(fn: (value: string, name: string) => void): void };
}

/** Where the pipeline finds the caller's address: Bun.serve, or the edge (one address a connection). */
export interface PeerOf {
  requestIP(req: Incoming): { address: string } | null;
}

/** Pairs past this many are given to `forEach` through a map (a scan for names seen would grow with their square). */
const SCANNED_PAIRS = 32;

/**
 * A request's headers as llhttp hands them over (name, value, name, value…), names lower-cased (`lowerNames`); a name
 * sent twice is read as its values joined by `, `, as Headers does. Asked by lower-case name, as the pipeline asks. No
 * map is made for them: a request has a handful, and a scan of them costs less than a map built for each request.
 */
export class EdgeHeaders {
  constructor(private readonly pairs: readonly string[]) {}

  get(name: string): string | null {
    const pairs = this.pairs;
    let value: string | null = null;
    for (let i = 0; i < pairs.length; i += 2)
      if (pairs[i] === name) value = value === null ? pairs[i + 1]! : `${value}, ${pairs[i + 1]}`;
    return value;
  }

  /** Each name once, in the order first sent, with its values joined. */
  forEach(fn: (value: string, name: string) => void): void {
    const pairs = this.pairs;
    if (pairs.length > 2 * SCANNED_PAIRS) {
      joined(pairs).forEach(fn);
      return;
    }
    next: for (let i = 0; i < pairs.length; i += 2) {
      const name = pairs[i]!;
      for (let j = 0; j < i; j += 2) if (pairs[j] === name) continue next;
      fn(this.get(name)!, name);
    }
  }
}

/** The pairs as a map of each name to its values joined by `, `. */
function joined(pairs: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i < pairs.length; i += 2) {
    const had = map.get(pairs[i]!);
    map.set(pairs[i]!, had === undefined ? pairs[i + 1]! : `${had}, ${pairs[i + 1]}`);
  }
  return map;
}

export class EdgeRequest implements Incoming {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: EdgeHeaders,
    /** The body as it comes, when one follows the head and the edge reads bodies (the Management port). */
    readonly body: EdgeBody | null = null,
  ) {}
}

/**
 * A header name's lower case, the names seen first remembered as they came (up to `max`): clients and Bun write most
 * names capitalized (`Host`, `Content-Type`), and a `toLowerCase` makes a new string of each on every message. A
 * sender of ever new names costs a lookup more than the `toLowerCase` each, and no memory past `max`.
 */
export function lowerCaser(max = 256): (name: string) => string {
  const known = new Map<string, string>();
  return (name) => {
    let lower = known.get(name);
    if (lower === undefined) {
      lower = name.toLowerCase();
      if (known.size < max) known.set(name, lower);
    }
    return lower;
  };
}

const lowerName = lowerCaser();

/** The headers llhttp hands over (name, value, name, value…), their names lower-cased in place. */
export function lowerNames(raw: string[]): string[] {
  for (let i = 0; i < raw.length; i += 2) raw[i] = lowerName(raw[i]!);
  return raw;
}

/** The Host asked about last, and its origin: a server's requests nearly all name one Host. */
let lastHost: string | null = '';
let lastOrigin = '';

/** `http://` and the Host; empty when it is empty or no host name at all (`a/b`, `a b`), as Bun writes the URL then. */
function originOf(host: string | null): string {
  lastHost = host;
  return (lastOrigin = host && !/[\s/?#@\\]/.test(host) ? `http://${host}` : '');
}

/**
 * A path made only of these, and a query without what the URL standard percent-encodes, is its own normal form: no
 * dot segment, percent sign, backslash, space or byte above 0x7e. Anything else goes through the URL parser.
 */
const NORMAL = /^\/[A-Za-z0-9\-_~!$&'()*+,;=:@/]*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?%]*)?$/;

/**
 * `url` as Bun.serve writes it for the same request line and Host (shared/src/target.ts reads it): the target
 * normalised as the URL standard does (dot segments resolved, `\` read as `/`, what must be percent-encoded
 * encoded), after `http://` and the Host; the target as it came when the Host is empty or no host name at all. null:
 * a target that is no path (`*`, a space in it), which Bun answers with a bare 400.
 */
export function urlOf(host: string | null, target: string): string | null {
  const origin = host === lastHost ? lastOrigin : originOf(host);
  if (NORMAL.test(target)) return origin + target;
  if (/\s/.test(target)) return null;
  const absolute = !target.startsWith('/');
  // no usable Host, or one no URL parser takes (`[`): Bun leaves the target as it came, and the pipeline refuses it
  // (400 `malformed_request`) either way
  if (!absolute && !origin) return target;
  let url: URL;
  try {
    // an absolute-form target names its own origin: Bun keeps its path and query after the Host header's origin
    url = absolute ? new URL(target) : new URL(origin + target);
  } catch {
    return absolute ? null : origin + target;
  }
  if (absolute && url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return origin + url.pathname + url.search + url.hash;
}
