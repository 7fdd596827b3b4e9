/**
 * The gateway's hop to its own services: HTTP/1.1 over a pool of kept-alive TCP
 * connections (Bun.connect), requests written into one shared buffer and sent in one write, answers parsed in place.
 *
 * Why not fetch: on the uncached Management read, fetch was most of the gateway's CPU
 * (a separate HTTP thread, a Response and Headers object per call, a timer signal),
 * which put the hop at 0.67x nginx's throughput (`bun run bench hop`, docs/benchmarks.md).
 * The services are ours and speak plain HTTP/1.1, so this client only needs what they
 * send: a status line, headers, and a body by Content-Length, chunked, or until close.
 */

import { putLatin1, withDeadline } from '@studio/shared';
import type { Socket } from 'bun';

export interface Answer {
  status: number;
  /**
   * The answer's own headers by lower-case name, a name sent twice as its values joined by `, ` (as Headers reads
   * it; the services set no cookies). Not the framing ones, which are the hop's (HOP_HEADERS).
   */
  headers: Record<string, string>;
  body: Uint8Array;
}

/** The service could not be reached or did not answer in time (never the caller's fault). */
export class UpstreamError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'timeout',
    message: string = kind,
  ) {
    super(message);
  }
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
/** Where a request that fits is written before it is sent: the socket takes it at once, or `send` copies the rest. */
const REQUEST = Buffer.allocUnsafeSlow(64 * 1024);
/** No bytes yet: shared, never written to (`data` concatenates into a new buffer). */
const NO_BYTES = Buffer.alloc(0);
/** An answer larger than this is refused (the services' largest page is far below). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Idle connections are closed before the services' own idle timeout (Bun.serve: 10 s) can close them under us. */
const IDLE_MS = 4_000;
const MAX_IDLE = 256;

interface Pending {
  resolve(a: Answer): void;
  reject(e: UpstreamError): void;
  /** When the whole answer is due (ms since the epoch): past it, the pool's watchdog fails the call. */
  deadline: number;
  head: boolean;
}

/** One kept-alive connection and the answer it is reading. */
class Conn {
  socket: Socket<Conn> | null = null;
  pending: Pending | null = null;
  /** Bytes of the answer so far (usually one chunk). */
  buf: Buffer = NO_BYTES;
  /** Bytes of a request not yet taken by the socket (large bodies). */
  unsent: Uint8Array | null = null;
  idleSince = 0;
  closed = false;

  constructor(readonly pool: Pool) {}

  /** `bytes`, or what the socket does not take of them (copied when they lie in the shared REQUEST buffer). */
  send(bytes: Uint8Array) {
    const n = this.socket!.write(bytes);
    if (n >= bytes.byteLength) this.unsent = null;
    else {
      const rest = bytes.subarray(Math.max(0, n));
      this.unsent = rest.buffer === REQUEST.buffer ? Buffer.from(rest) : rest;
    }
  }

  drain() {
    if (this.unsent) this.send(this.unsent);
  }

  data(chunk: Buffer) {
    // bytes on an idle connection: it is closed and leaves the pool (`destroy`). Bytes that come only once the next
    // request went out on it cannot be told from that request's answer (HTTP/1.1 has no request ids).
    if (!this.pending) return this.fail(new UpstreamError('unavailable', 'unexpected bytes from the service'));
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    if (this.buf.length > MAX_ANSWER_BYTES) return this.fail(new UpstreamError('unavailable', 'answer too large'));
    let answer: ReturnType<typeof parseAnswer>;
    try {
      answer = parseAnswer(this.buf, this.pending.head, false);
    } catch (err) {
      return this.fail(err as UpstreamError);
    }
    if (!answer) return;
    // bytes past the answer's end: its framing cannot be trusted, nor can they be the next call's answer
    if (answer.end < this.buf.length) return this.fail(new UpstreamError('unavailable', 'bytes after the answer'));
    this.finish(answer.answer, answer.keepAlive);
  }

  /** The server closed: an answer read until close is complete now; anything else pending failed. */
  close() {
    this.closed = true;
    this.pool.forget(this);
    if (!this.pending) return;
    let answer = null;
    try {
      answer = this.buf.length ? parseAnswer(this.buf, this.pending.head, true) : null;
    } catch {
      /* an unreadable answer fails below */
    }
    if (answer) this.finish(answer.answer, false);
    else
      this.fail(
        new UpstreamError(
          'unavailable',
          this.buf.length ? 'the service closed mid-answer' : 'the service closed the connection',
        ),
      );
  }

  private finish(answer: Answer, keepAlive: boolean) {
    const p = this.pending!;
    this.pending = null;
    this.buf = NO_BYTES;
    this.pool.settled(this);
    if (keepAlive && !this.closed) this.pool.release(this);
    else this.destroy();
    p.resolve(answer);
  }

  fail(err: UpstreamError) {
    const p = this.pending;
    this.pending = null;
    this.pool.settled(this);
    this.destroy();
    p?.reject(err);
  }

  destroy() {
    this.closed = true;
    this.pool.forget(this);
    this.socket?.end();
  }
}

const asIs = (a: Answer) => a;
/** `then` run on what came, its result (or what it threw) the promise's: a call's answer and its failure alike. */
function deliver<V, T>(
  then: (v: V) => T | PromiseLike<T>,
  resolve: (t: T | PromiseLike<T>) => void,
  reject: (err: unknown) => void,
) {
  return (v: V) => {
    try {
      resolve(then(v));
    } catch (err) {
      reject(err);
    }
  };
}

/** A failure passed on as it is (`request`'s, and a forwarded call's when no caller turns it into an answer). */
export const rethrow = (err: unknown): never => {
  throw err;
};

/** Kept-alive connections to one service. */
export class Pool {
  private idle: Conn[] = [];
  private readonly hostname: string;
  private readonly port: number;
  private readonly hostHeader: string;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  /** Connections with a call in flight, and the interval that times them. */
  private busy = new Set<Conn>();
  private watchdog: ReturnType<typeof setInterval> | null = null;

  constructor(origin: string) {
    const url = new URL(origin);
    if (url.protocol !== 'http:') throw new Error(`the service hop speaks http only: ${origin}`);
    this.hostname = url.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(url.port || 80);
    this.hostHeader = url.host;
  }

  /**
   * One request. `head` is the header block without the request line, Host and
   * Content-Length, each line ending in CRLF. A GET or HEAD that fails on a reused
   * connection before any byte came back is sent once more on a new one (the
   * service may have closed it idle just then); writes are never sent twice.
   */
  request(method: string, target: string, head: string, body: Uint8Array | null, timeoutMs: number): Promise<Answer> {
    return this.call(method, target, head, body, timeoutMs, asIs, rethrow);
  }

  /**
   * `request`, with the answer (or the failure) turned into what the caller wants by `ok` (or `failed`) in the
   * socket's own callback: one promise per call, however many steps its answer goes through. A step chained with
   * `then` costs a promise and a reaction each, on every call.
   */
  call<T>(
    method: string,
    target: string,
    head: string,
    body: Uint8Array | null,
    timeoutMs: number,
    ok: (a: Answer) => T | PromiseLike<T>,
    failed: (err: unknown) => T | PromiseLike<T>,
  ): Promise<T> {
    // the request line and headers: written out at each send (a retry sends them again), not kept as bytes
    const lines = this.requestLines(method, target, head, body);
    const isHead = method === 'HEAD';
    const deadline = Date.now() + timeoutMs;
    return new Promise<T>((resolve, reject) => {
      const settle = deliver(ok, resolve, reject);
      const fail = deliver(failed, resolve, reject);
      const start = (conn: Conn, ms: number, onFail: (e: UpstreamError) => void) => {
        try {
          this.exchange(conn, lines, body, isHead, ms, settle, onFail);
        } catch (err) {
          fail(err);
        }
      };
      const onFresh = () =>
        void this.connect(deadline - Date.now()).then(
          (fresh) => start(fresh, Math.max(0, deadline - Date.now()), fail),
          fail,
        );
      const conn = this.idle.pop();
      if (!conn) return onFresh();
      start(conn, timeoutMs, (err) => {
        const retry =
          (method === 'GET' || isHead) &&
          err instanceof UpstreamError &&
          err.kind === 'unavailable' &&
          !conn.buf.length;
        if (retry) onFresh();
        else fail(err);
      });
    });
  }

  private requestLines(method: string, target: string, head: string, body: Uint8Array | null): string {
    const length = body ? body.byteLength : 0;
    return `${method} ${target} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n${head}${length || method !== 'GET' ? `content-length: ${length}\r\n` : ''}\r\n`;
  }

  private exchange(
    conn: Conn,
    lines: string,
    body: Uint8Array | null,
    head: boolean,
    timeoutMs: number,
    resolve: (a: Answer) => void,
    reject: (e: UpstreamError) => void,
  ) {
    conn.pending = { resolve, reject, deadline: Date.now() + timeoutMs, head };
    conn.buf = NO_BYTES;
    this.watch(conn, timeoutMs);
    conn.send(requestBytes(lines, body));
  }

  /**
   * Calls in flight are timed by one watchdog per pool, not a timer each: a timer set and
   * cleared per call was 2 % of the hop's CPU (docs/benchmarks.md). It looks every tenth of
   * the timeout (10-250 ms), so a call times out within that much after its deadline, and
   * stops once nothing is in flight (so a closed pool still times the calls it had).
   */
  private watch(conn: Conn, timeoutMs: number) {
    this.busy.add(conn);
    if (this.watchdog) return;
    this.watchdog = setInterval(() => this.expire(), Math.min(250, Math.max(10, timeoutMs / 10)));
    this.watchdog.unref?.();
  }

  /** Fails the calls past their deadline; stops once nothing is in flight (the next call starts it again). */
  private expire() {
    const now = Date.now();
    for (const conn of this.busy)
      if (conn.pending && conn.pending.deadline <= now) conn.fail(new UpstreamError('timeout'));
    if (!this.busy.size && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = null;
    }
  }

  /** The call on this connection is over (answered or failed). */
  settled(conn: Conn) {
    this.busy.delete(conn);
  }

  /**
   * A new connection within the call's time (Bun.connect has no timeout of its own: a service whose packets are
   * dropped leaves a connect waiting on the kernel's SYN retries, two minutes). One that connects too late is closed.
   */
  private async connect(timeoutMs: number): Promise<Conn> {
    const conn = new Conn(this);
    const connecting = Bun.connect<Conn>({ hostname: this.hostname, port: this.port, data: conn, socket: HANDLERS });
    try {
      conn.socket = await withDeadline(
        connecting,
        timeoutMs,
        () => new UpstreamError('timeout', 'no connection within the time limit'),
      );
    } catch (err) {
      if (err instanceof UpstreamError) {
        conn.closed = true;
        connecting.then(
          (socket) => socket.end(),
          () => {},
        );
        throw err;
      }
      throw new UpstreamError('unavailable', `cannot connect: ${(err as Error).message}`);
    }
    return conn;
  }

  release(conn: Conn) {
    if (this.idle.length >= MAX_IDLE) return conn.destroy();
    conn.idleSince = Date.now();
    this.idle.push(conn);
    this.sweeper ??= setInterval(() => this.sweep(), IDLE_MS / 2);
    this.sweeper.unref?.();
  }

  forget(conn: Conn) {
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
  }

  /** Closes connections idle for IDLE_MS, oldest first (they sit at the bottom of the stack). */
  private sweep() {
    const cutoff = Date.now() - IDLE_MS;
    while (this.idle.length && this.idle[0]!.idleSince < cutoff) this.idle.shift()!.destroy();
  }

  close() {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    for (const conn of this.idle.splice(0)) conn.destroy();
  }
}

/**
 * A request's head (latin1: a byte a character) and body as one run of bytes: in REQUEST when they fit (no buffer
 * made per call; `send` copies what the socket does not take), else in a buffer of their own.
 */
function requestBytes(head: string, body: Uint8Array | null): Uint8Array {
  const size = head.length + (body?.byteLength ?? 0);
  const out = size <= REQUEST.length ? REQUEST : Buffer.allocUnsafe(size);
  const n = putLatin1(out, 0, head);
  if (body) out.set(body, n);
  return out.subarray(0, size);
}

const HANDLERS = {
  data: (s: Socket<Conn>, chunk: Buffer) => s.data.data(chunk),
  drain: (s: Socket<Conn>) => s.data.drain(),
  close: (s: Socket<Conn>) => s.data.close(),
  error: (s: Socket<Conn>) => s.data.close(),
  end: (s: Socket<Conn>) => s.data.close(),
};

/**
 * A complete answer at the start of `buf` and where it ends, or null while more bytes are due.
 * `ended`: the server closed, so a body without a length is complete.
 */
export function parseAnswer(
  buf: Buffer,
  head: boolean,
  ended: boolean,
): { answer: Answer; keepAlive: boolean; end: number } | null {
  let start = 0;
  for (;;) {
    const end = buf.indexOf(CRLFCRLF, start);
    if (end < 0) return null;
    const { status, headers, length, chunked, keepAlive } = parseHead(buf.toString('latin1', start, end));
    const bodyStart = end + 4;
    // an interim answer (100 Continue): the real one follows
    if (status < 200) {
      start = bodyStart;
      continue;
    }
    if (head || status === 204 || status === 304)
      return { answer: { status, headers, body: new Uint8Array(0) }, keepAlive, end: bodyStart };
    if (chunked) {
      const chunks = dechunk(buf, bodyStart);
      return chunks ? { answer: { status, headers, body: chunks.body }, keepAlive, end: chunks.end } : null;
    }
    if (length >= 0) {
      const end = bodyStart + length;
      if (buf.length < end) return null;
      return { answer: { status, headers, body: buf.slice(bodyStart, end) }, keepAlive, end };
    }
    // neither a length nor chunks: the body runs until the server closes
    return ended
      ? { answer: { status, headers, body: buf.slice(bodyStart) }, keepAlive: false, end: buf.length }
      : null;
  }
}

/** HTTP/1.0 or 1.1, a status of three digits 100-599, then the reason after a space or the line's end. */
const STATUS_LINE = /^HTTP\/1\.[01] [1-5]\d\d(?: |\r\n|$)/;
/**
 * A whole head as RFC 9112 has it: the status line, then lines of a token, a colon and a value, each after a CRLF. So
 * no bare CR or LF, no space before a colon, no folded line, no control character but a tab in a reason or a value:
 * one regex over the head rather than a check per header.
 */
const HEAD =
  /^HTTP\/1\.[01] [1-5]\d\d(?: [\t\x20-\x7e\x80-\xff]*)?(?:\r\n[-!#$%&'*+.^_`|~0-9A-Za-z]+:[\t\x20-\x7e\x80-\xff]*)*$/;
const isBlank = (c: number) => c === 32 || c === 9;

/**
 * Headers that frame the hop's own exchange or name its server: read here (the length, chunks, keep-alive) and not
 * passed on, the gateway frames its answer itself.
 */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'server']);

/**
 * Header names as the services send them, lower-cased, the names seen first remembered as they came: Bun writes the
 * ones it knows capitalized (`Content-Type`), and a `toLowerCase` makes a new string of each on every answer. Names
 * past the first 256 are lower-cased each time, so a service of ever new names costs no memory.
 */
const lowered = new Map<string, string>();
function lower(name: string): string {
  let l = lowered.get(name);
  if (l === undefined) {
    l = name.toLowerCase();
    if (lowered.size < 256) lowered.set(name, l);
  }
  return l;
}

/**
 * The status line and header lines (without the blank line that ends them), read in place:
 * two strings a header (its name and value) and one object, on every answer of the hop.
 */
function parseHead(text: string) {
  if (!HEAD.test(text))
    throw new UpstreamError(
      'unavailable',
      STATUS_LINE.test(text) ? 'a malformed answer head' : 'not an HTTP/1.1 answer',
    );
  const status = (text.charCodeAt(9) - 48) * 100 + (text.charCodeAt(10) - 48) * 10 + text.charCodeAt(11) - 48;
  const headers: Record<string, string> = {};
  let length = -1;
  let chunked = false;
  let coded = false;
  let keepAlive = text.startsWith('HTTP/1.1');
  let at = text.indexOf('\r\n');
  while (at >= 0) {
    const from = at + 2;
    at = text.indexOf('\r\n', from);
    const to = at < 0 ? text.length : at;
    // each line is a name (HEAD: no blank before its colon), a colon and a value
    const colon = text.indexOf(':', from);
    let valueFrom = colon + 1;
    let valueTo = to;
    while (valueFrom < valueTo && isBlank(text.charCodeAt(valueFrom))) valueFrom++;
    while (valueTo > valueFrom && isBlank(text.charCodeAt(valueTo - 1))) valueTo--;
    const name = lower(text.slice(from, colon));
    const value = text.slice(valueFrom, valueTo);
    if (!HOP_HEADERS.has(name)) headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    else if (name === 'content-length') length = contentLength(value, length);
    else if (name === 'transfer-encoding') {
      coded = true;
      chunked = value.toLowerCase().includes('chunked');
    } else if (name === 'connection') keepAlive = !value.toLowerCase().includes('close');
  }
  // both framings at once: the classic of request smuggling (RFC 9112 6.3), whichever one this client would follow
  if (coded && length >= 0) throw new UpstreamError('unavailable', 'Content-Length with Transfer-Encoding');
  return { status, headers, length, chunked, keepAlive };
}

/** A Content-Length's value: digits only (no sign, blank, hex or list), and the same as one before (`seen`, or -1). */
function contentLength(value: string, seen: number): number {
  let digits = value.length > 0;
  for (let i = 0; i < value.length && digits; i++) digits = isDigit(value.charCodeAt(i));
  const length = digits ? Number(value) : -1;
  if (length < 0 || (seen >= 0 && length !== seen)) throw new UpstreamError('unavailable', 'a bad Content-Length');
  return length;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
/** A hex digit's value, or -1. */
const hexValue = (c: number) => (isDigit(c) ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);

/**
 * The size on a chunk's line from `at` to `eol`: hex digits only (no `0x`, sign or blank), then the line's end or an
 * extension after `;`. A size over MAX_ANSWER_BYTES is refused as it is read, before a long one loses precision.
 */
function chunkSize(buf: Buffer, at: number, eol: number): number {
  let size = 0;
  let i = at;
  for (; i < eol; i++) {
    const v = hexValue(buf[i]!);
    if (v < 0) break;
    size = size * 16 + v;
    if (size > MAX_ANSWER_BYTES) throw new UpstreamError('unavailable', 'chunk too large');
  }
  if (i === at || (i < eol && buf[i] !== 59)) throw new UpstreamError('unavailable', 'bad chunk size');
  return size;
}

/** The whole chunked body from `at` and where it ends (past the trailers), or null while chunks are still due. */
function dechunk(buf: Buffer, at: number): { body: Uint8Array; end: number } | null {
  const parts: Buffer[] = [];
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = chunkSize(buf, at, eol);
    if (size === 0) {
      // trailers, if any, end with an empty line
      const trailerEnd = buf.indexOf(CRLFCRLF, eol);
      const bare = buf.length >= eol + 4 && buf[eol + 2] === 13 && buf[eol + 3] === 10;
      if (!bare && trailerEnd < 0) return null;
      return { body: parts.length === 1 ? parts[0]! : Buffer.concat(parts), end: bare ? eol + 4 : trailerEnd + 4 };
    }
    const dataEnd = eol + 2 + size;
    if (buf.length < dataEnd + 2) return null;
    // the chunk's data ends where its size says, in a CRLF: not skipped unread
    if (buf[dataEnd] !== 13 || buf[dataEnd + 1] !== 10)
      throw new UpstreamError('unavailable', 'a chunk longer than its size');
    parts.push(buf.slice(eol + 2, dataEnd));
    at = dataEnd + 2;
  }
}
