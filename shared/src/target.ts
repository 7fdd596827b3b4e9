/**
 * The one reader of a served request's target (docs/design/hostile-callers.md), for every port of every
 * process, without building a URL object (it runs on every request).
 *
 * Bun writes `req.url` as `http://<Host><target>` with the target already normalised,
 * or as the bare target when it judged the Host unusable (`a/b`, `a b`, empty). A Host
 * it lets through can still be one no URL parser accepts (`[`, `a:b:c`, `%2f`, `xn--`)
 * or one that names no host (`a..b`). Either way the request is 400 `malformed_request`;
 * the target is still found, whole, for the log line (looking for `//` in a bare target
 * is how its first segment used to be dropped).
 */
/** What a 400 `malformed_request` says, on every port. */
export const MALFORMED_DETAIL =
  'The Host header is not a host name or address with an optional port, or the request target is not a path.';

export interface RequestTarget {
  /** The path, without the query. */
  path: string;
  /** The path with its query: what is forwarded, signed and cached on. */
  pathAndQuery: string;
  /** False when the Host (or the target) is malformed: answer 400. */
  valid: boolean;
}

/**
 * The scheme and Host of the last URL found well formed, with the `/` that ends them: a server's requests nearly all
 * name the same Host, which is then checked once, not on every request.
 */
let lastOrigin = '';

/** The target of `url`, whole, and whether the Host before it is well formed. */
export function requestTarget(url: string): RequestTarget {
  let start = lastOrigin.length - 1;
  let valid = start > 0 && url.startsWith(lastOrigin);
  if (!valid) {
    // `http://` or `https://` (a server with TLS); anything else is the bare target Bun leaves for a refused Host
    const scheme = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : 0;
    start = url.indexOf('/', scheme);
    if (start < 0) return { path: '/', pathAndQuery: '/', valid: false };
    valid = scheme > 0 && start > scheme && validAuthority(url, scheme, start);
    if (valid) lastOrigin = url.slice(0, start + 1);
  }
  const pathAndQuery = start === 0 ? url : url.slice(start);
  const q = pathAndQuery.indexOf('?');
  return { path: q < 0 ? pathAndQuery : pathAndQuery.slice(0, q), pathAndQuery, valid };
}

const isDigit = (c: number) => c >= 48 && c <= 57;
/** RFC 3986 unreserved characters: letters, digits, `-`, `.`, `_`, `~`. */
const isNameChar = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || isDigit(c) || c === 45 || c === 46 || c === 95 || c === 126;

/**
 * `host[:port]` as URL parsers accept it: a name of unreserved characters, or `[` IPv6 `]`;
 * a port of at most five digits, up to 65535 (or none after the colon, as RFC 3986 allows).
 */
function validAuthority(s: string, from: number, to: number): boolean {
  // an IPv6 literal (rare: a caller at http://[::1]:…) is left to the URL parser's own rules
  if (s.charCodeAt(from) === 91) return URL.canParse(`${s.slice(0, to)}/`);
  let i = from;
  for (; i < to && isNameChar(s.charCodeAt(i)); i++);
  if (i === from || !validName(s, from, i)) return false;
  if (i === to) return true;
  if (s.charCodeAt(i) !== 58 || to - i - 1 > 5) return false;
  let port = 0;
  for (i++; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c)) return false;
    port = port * 10 + c - 48;
  }
  return port <= 65535;
}

/**
 * A name with no empty label (`a..b` names no host). A `xn--` label is punycode, which URL parsers decode and may
 * refuse (`xn--`, `xn--a`): such a name is left to the URL parser. And URL parsers read a name whose last label is a
 * number as an IPv4 address: then it must be a dotted quad.
 */
function validName(s: string, from: number, to: number): boolean {
  const end = s.charCodeAt(to - 1) === 46 ? to - 1 : to; // a trailing dot ends a fully qualified name
  if (end <= from) return false;
  let punycode = false;
  for (let start = from; start <= end; ) {
    const dot = s.indexOf('.', start);
    const stop = dot < 0 || dot > end ? end : dot;
    if (stop === start) return false;
    punycode ||=
      stop - start >= 4 &&
      (s.charCodeAt(start) | 32) === 120 &&
      (s.charCodeAt(start + 1) | 32) === 110 &&
      s.charCodeAt(start + 2) === 45 &&
      s.charCodeAt(start + 3) === 45;
    start = stop + 1;
  }
  if (punycode && !URL.canParse(`http://${s.slice(from, to)}/`)) return false;
  const label = Math.max(s.lastIndexOf('.', end - 1) + 1, from);
  let numeric = s.charCodeAt(label) === 48 && (s.charCodeAt(label + 1) | 32) === 120; // 0x…
  if (!numeric) {
    numeric = true;
    for (let i = label; i < end && numeric; i++) numeric = isDigit(s.charCodeAt(i));
  }
  if (!numeric) return true;
  let parts = 0;
  let value = -1;
  for (let i = from; i <= end; i++) {
    const c = i < end ? s.charCodeAt(i) : 46;
    if (c === 46) {
      if (value < 0) return false;
      parts++;
      value = -1;
    } else if (!isDigit(c) || (value = value < 0 ? c - 48 : value * 10 + c - 48) > 255) return false;
  }
  return parts === 4;
}
