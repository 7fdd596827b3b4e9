/**
 * The edge: the API ports' HTTP/1.1 server, on `Bun.listen` with llhttp, the parser Bun builds in (Node's
 * `HTTPParser`), reading the requests (docs/design/edge.md). It does what Bun.serve does for a port (framing, the
 * header limit, request bodies on the Management port, keep-alive and pipelining with answers in order, HEAD, the
 * idle and header timeouts, a graceful stop) without making a Request and a Response for every call: a cached
 * read's answer is written from the bytes the cache holds, a forwarded one from the bytes the hop read.
 */
import { STATUS_CODES } from 'node:http';
import { AppError, log } from '@studio/shared';
import { MAX_BODY_BYTES } from '@studio/shared/body';
import { SERVE_DEFAULTS } from '@studio/shared/io/serve';
import { putLatin1 as put } from '@studio/shared/text-buffer';
import { type Answer, HEAD_ROOM, HeldAnswer, hasHeadRoom, isKeptHeaders } from './answer';
import { BodyAbandoned, EdgeBody } from './body';
import { EdgeHeaders, EdgeRequest, lowerNames, type PeerOf, urlOf } from './request';

/** Node's `HTTPParser` binding, as much of it as the edge uses. */
interface Parser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(chunk: Uint8Array): number | (Error & { code?: string });
  close(): void;
  [callback: number]: unknown;
}
interface ParserBinding {
  HTTPParser: {
    new (): Parser;
    REQUEST: number;
    kOnMessageBegin: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
  };
  methods: string[];
}
const { HTTPParser, methods: METHODS } = (
  process as unknown as { binding(name: 'http_parser'): ParserBinding }
).binding('http_parser');

export { HTTPParser as EdgeParser };

/** Request line and headers, at most: Bun.serve's limit (431 past it). */
export const HEAD_MAX = 16 * 1024;
/** A request's line and headers must arrive whole within this of its first byte (Bun.serve's 10 s). */
export const HEADERS_TIMEOUT_MS = 10_000;
/**
 * How long a connection that sent its FIN reads what the client still sends before closing (nginx: 5 s). Bun's socket
 * timer ticks every 4 s, so this is 4 to 8 s.
 */
export const LINGER_SECONDS = 5;
/** Answers waiting on one connection before it is read no further until they are written (a pipelined flood). */
const WAITING_MAX = 64;
/** What Bun.serve answers to what its parser refuses: no body, the connection closed. */
const BARE_400 = Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', 'latin1');
const BARE_431 = Buffer.from('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n', 'latin1');
/** An answer that could not be written (its body could not be read): the connection closes after it. */
const BARE_500 = Buffer.from('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
/** What a client that sent `Expect: 100-continue` waits for before it sends its body (Bun.serve sends it too). */
const CONTINUE = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
/** A chunked body llhttp could not read to its end: the request's answer says so, then the bare 400. */
const badFraming = () =>
  new AppError('malformed_request', { detail: "The request body's chunked framing is malformed." });
/** Framing is the edge's to write: an answer's own is dropped. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
const HEAD_METHOD = METHODS.indexOf('HEAD');

export interface EdgeServer {
  readonly port: number;
  readonly url: URL;
  /** Stop accepting; idle connections close now, the others after their answers. `force`: every one at once. */
  stop(force?: boolean): Promise<void>;
}

export type EdgeHandler = (req: EdgeRequest, server: PeerOf) => Answer | Promise<Answer>;

export interface EdgeOptions {
  hostname: string;
  port: number;
  /** Seconds a connection may stay silent (Bun.serve's `idleTimeout`). */
  idleTimeout: number;
  /**
   * Read request bodies (the Management port), held to 1 MiB as `readBody` holds them; without, a request with a body
   * is answered and its connection closed, the body never read (the read-only Storefront).
   */
  bodies?: boolean;
  fetch: EdgeHandler;
}

/** An answer in the order it is owed: written once it is ready and every one before it is out. */
interface Slot {
  ready: Uint8Array | null;
  /** The answer closes the connection: the answers owed after it are never written. */
  last?: boolean;
}

let second = 0;
let date = '';
/** The Date header's value, made once a second. */
export function dateNow(): string {
  const now = Math.floor(Date.now() / 1000);
  if (now !== second) date = new Date((second = now) * 1000).toUTCString();
  return date;
}

/** One buffer every answer that fits is written from: the socket copies what it does not send at once. */
const OUT = Buffer.allocUnsafe(64 * 1024);

const noBody = (status: number) => status < 200 || status === 204 || status === 304;

/** `HTTP/1.1 <status> <reason>\r\n`, made once a status. */
const statusLines: string[] = [];
const statusLine = (status: number): string =>
  (statusLines[status] ??= `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`);

/** `name: value\r\n` into `b` at `p`. */
function putLine(b: Buffer, p: number, name: string, value: string): number {
  p = put(b, p, name);
  b[p] = 58; // ':'
  b[p + 1] = 32;
  p = put(b, p + 2, value);
  b[p] = 13;
  b[p + 1] = 10;
  return p + 2;
}

/** The lines of a representation's own headers (`keptHeaders`), written once as bytes. */
const keptLines = new WeakMap<object, Buffer>();

/** `own`'s lines as bytes when it is a representation's kept headers, made on its first answer; else undefined. */
function linesOf(own: Readonly<Record<string, string>>): Buffer | undefined {
  let lines = keptLines.get(own);
  if (lines || !isKeptHeaders(own)) return lines;
  let text = '';
  for (const k in own) if (!FRAMING.has(k)) text += `${k}: ${own[k]}\r\n`;
  keptLines.set(own, (lines = Buffer.from(text, 'latin1')));
  return lines;
}

/** Whether `extra` names a header `own` has too (its value then replaces own's). */
function overrides(own: Readonly<Record<string, string>>, extra: Readonly<Record<string, string>>): boolean {
  for (const k in extra) if (k in own) return true;
  return false;
}

/**
 * A held answer's head into `b`, a name or value at a time: a few hundred characters, cheaper so than joined into one
 * string and that string flattened and copied (what a head built by `+=` costs when written; docs/benchmarks.md).
 * A representation's own headers, the same on every answer made from it, are copied in as the bytes written once
 * (`linesOf`), unless the gateway's replace one of them. Returns its length, also when that is past the end of `b`
 * (`put` writes nothing there): then nothing of it is to be sent, and a buffer of that length takes it whole.
 */
function heldHead(a: HeldAnswer, length: number, close: boolean, b: Buffer): number {
  const { own, extra } = a;
  let p = put(b, 0, statusLine(a.status));
  const lines = linesOf(own);
  if (lines && !(extra && overrides(own, extra))) {
    if (p + lines.length <= b.length) lines.copy(b, p);
    p += lines.length;
  } else for (const k in own) if (!(extra && k in extra) && !FRAMING.has(k)) p = putLine(b, p, k, own[k]!);
  if (extra) for (const k in extra) if (!FRAMING.has(k)) p = putLine(b, p, k, extra[k]!);
  return putFraming(b, p, a.status, length, close);
}

/** The most bytes `putFraming` writes. */
const FRAMING_MOST = 128;

/**
 * The edge's framing of every answer, after its headers: Date, Content-Length unless its status has no body,
 * Connection: close when the connection ends with it, and the blank line. Returns where it ended.
 */
function putFraming(b: Buffer, p: number, status: number, length: number, close: boolean): number {
  p = putLine(b, p, 'date', dateNow());
  if (!noBody(status)) p = putLine(b, p, 'content-length', String(length));
  if (close) p = putLine(b, p, 'connection', 'close');
  b[p] = 13;
  b[p + 1] = 10;
  return p + 2;
}

/** The bytes of a held answer: its headers and body as they are, nothing copied but into OUT (or one buffer). */
function heldBytes(a: HeldAnswer, headOnly: boolean, close: boolean): Uint8Array {
  const kept = noBody(a.status) ? null : a.body;
  const length = kept?.byteLength ?? 0;
  const body = headOnly ? null : kept;
  const n = heldHead(a, length, close, OUT);
  const size = n + (body?.byteLength ?? 0);
  // a kept body with room before it: the head copied there, and the body sent where it lies, not copied (the socket
  // takes the bytes at once, or they are copied: nothing else writes the room in between)
  if (body && n <= HEAD_ROOM && hasHeadRoom(body)) {
    const out = Buffer.from(body.buffer, body.byteOffset - n, size);
    OUT.copy(out, 0, 0, n);
    return out;
  }
  if (size > OUT.length) {
    // longer than OUT, by its head or its body: a buffer of its own (the head written again when OUT could not hold it)
    const out = Buffer.allocUnsafe(size);
    if (n > OUT.length) heldHead(a, length, close, out);
    else OUT.copy(out, 0, 0, n);
    if (body) out.set(body, n);
    return out;
  }
  if (body) OUT.set(body, n);
  return OUT.subarray(0, size);
}

/** A Response's bytes: its body read whole first (the docs, a problem), so the answer is written in one go. */
async function responseBytes(res: Response, headOnly: boolean, close: boolean): Promise<Uint8Array> {
  const body = res.body && !noBody(res.status) ? new Uint8Array(await res.arrayBuffer()) : null;
  let lines = '';
  res.headers.forEach((v, k) => {
    if (!FRAMING.has(k) && k !== 'set-cookie') lines += `${k}: ${v}\r\n`;
  });
  for (const cookie of res.headers.getSetCookie()) lines += `set-cookie: ${cookie}\r\n`;
  // a buffer of its own, not OUT: other answers may be written through OUT before this one's turn comes
  const status = statusLine(res.status);
  const sent = headOnly ? null : body;
  const out = Buffer.allocUnsafe(status.length + lines.length + FRAMING_MOST + (sent?.byteLength ?? 0));
  const n = putFraming(out, put(out, put(out, 0, status), lines), res.status, body?.byteLength ?? 0, close);
  if (sent) out.set(sent, n);
  return out.subarray(0, n + (sent?.byteLength ?? 0));
}

/** Whether a Response asks for its connection to close (a 408 over a body that never ended). */
const closes = (res: Response) => res.headers.get('connection')?.toLowerCase() === 'close';

/** One connection: its parser, the answers it owes, and what the socket has not taken yet. */
class Connection {
  readonly parser = new HTTPParser();
  readonly slots: Slot[] = [];
  unsent: Uint8Array | null = null;
  /** When the bytes read began to leave a request's head unfinished (ms); 0 when none is. */
  begun = 0;
  /** No request after the ones read is served: the connection ends once their answers are out. */
  closing = false;
  /** The socket closed: what is still owed is dropped. */
  gone = false;
  /** Its FIN is sent: the connection lingers until the client closes (`end`). */
  shut = false;
  paused = false;
  /** Headers and target llhttp handed over before the headers were whole (a long head, or one in pieces). */
  partial: string[] = [];
  partialUrl = '';
  /** The body of the request being read, while it comes (only when the edge reads bodies). */
  body: EdgeBody | null = null;
  /** A request's head has begun and is not whole yet (only when the edge reads bodies: see `data`). */
  inHead = false;
  readonly peer: PeerOf;

  constructor(
    readonly socket: Bun.Socket<Connection>,
    readonly edge: Edge,
  ) {
    const ip = { address: socket.remoteAddress };
    this.peer = { requestIP: () => ip };
    const p = this.parser;
    p.initialize(HTTPParser.REQUEST, {}, HEAD_MAX, 0);
    // no callback for a message's start, its body (never read here: a request with one ends its connection) or its
    // end: each would be a call out of llhttp on every request
    p[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
      for (const h of headers) this.partial.push(h);
      this.partialUrl += url;
    };
    p[HTTPParser.kOnHeadersComplete] = this.onHead;
    if (edge.bodies) {
      p[HTTPParser.kOnMessageBegin] = () => {
        this.inHead = true;
      };
      p[HTTPParser.kOnBody] = (chunk: Uint8Array) => {
        const body = this.body;
        if (!body) return; // a request after the last one served
        body.push(chunk);
        if (body.failure) this.closing = true; // past the limit: nothing after it is read
      };
      p[HTTPParser.kOnMessageComplete] = () => {
        this.body?.end();
        this.body = null;
      };
    }
  }

  onHead = (
    major: number,
    minor: number,
    raw: string[] | undefined,
    method: number,
    target: string | undefined,
    _status: unknown,
    _message: unknown,
    upgrade: boolean,
    keepAlive: boolean,
  ): number => {
    if (!raw || !target) {
      raw = raw ? this.partial.concat(raw) : this.partial;
      target = (target ?? '') || this.partialUrl;
      this.partial = [];
      this.partialUrl = '';
    }
    this.inHead = false;
    if (this.closing) return 0;
    const headers = new EdgeHeaders(lowerNames(raw));
    const host = headers.get('host');
    const url = host === null && major === 1 && minor >= 1 ? null : urlOf(host, target);
    if (url === null) {
      this.refuse(BARE_400);
      return 0;
    }
    // keep-alive as llhttp reads it (the version, Connection), unless a body follows that nothing will read
    if (!keepAlive || upgrade) this.closing = true;
    const body = this.bodyOf(headers);
    const req = new EdgeRequest(METHODS[method]!, url, headers, body);
    this.answer(req, method === HEAD_METHOD, this.closing);
    return 0;
  };

  /** The request's body, when one follows its head and the edge reads bodies; otherwise the connection closes. */
  bodyOf(headers: EdgeHeaders): EdgeBody | null {
    const length = headers.get('content-length');
    const chunked = headers.get('transfer-encoding') !== null; // llhttp takes none but chunked (last) on a request
    if (!chunked && (length === null || length === '0')) return null;
    if (!this.edge.bodies) {
      this.closing = true;
      return null;
    }
    const body = (this.body = new EdgeBody(chunked ? null : Number(length), MAX_BODY_BYTES));
    // over the limit as declared: refused (413) before a byte is read, and nothing after it is
    if (body.failure) this.closing = true;
    else if (headers.get('expect')?.toLowerCase() === '100-continue') this.owe({ ready: CONTINUE });
    return body;
  }

  /** What llhttp refused: Bun.serve's bare answer after the ones owed, then the end of the connection. */
  refuse(bytes: Uint8Array) {
    this.closing = true;
    this.owe({ ready: bytes, last: true });
  }

  answer(req: EdgeRequest, headOnly: boolean, close: boolean) {
    let a: Answer | Promise<Answer>;
    try {
      a = this.edge.fetch(req, this.peer);
    } catch (err) {
      a = failed(err);
    }
    const body = req.body;
    // the usual call: answered now, nothing before it owed, written from OUT at once
    if (a instanceof HeldAnswer && this.slots.length === 0 && !this.unsent && !body) {
      this.write(heldBytes(a, headOnly, close));
      if (close) this.end();
      return;
    }
    const slot: Slot = { ready: null };
    this.owe(slot);
    const settle = (x: Answer) => {
      // an answer given before its request's body came whole (refused, or the body failed) ends the connection:
      // where the next request would begin is not known
      const last = close || !!(body && !body.done);
      if (x instanceof HeldAnswer) {
        slot.last = last;
        const bytes = heldBytes(x, headOnly, last);
        // its turn already (the usual forwarded call): written from OUT now (`write` copies what the socket leaves),
        // else copied out of it to wait for its turn
        return void this.fill(slot, this.slots[0] === slot && !this.unsent ? bytes : Buffer.from(bytes));
      }
      slot.last = last || closes(x);
      return responseBytes(x, headOnly, slot.last).then((b) => this.fill(slot, b));
    };
    // an answer waits for the rest of its request's body (a refusal that did not read it): then the connection goes on
    const ready = body && !body.settled ? Promise.resolve(a).then((x) => body.whenSettled().then(() => x)) : a;
    Promise.resolve(ready)
      .then(settle, (err) => settle(failed(err)))
      .catch((err) => {
        log('error', 'an answer could not be written', { error: String(err) });
        slot.last = true;
        this.fill(slot, BARE_500);
      });
  }

  owe(slot: Slot) {
    this.slots.push(slot);
    if (slot.ready) this.flush();
    else if (this.slots.length >= WAITING_MAX) this.pause(true);
  }

  fill(slot: Slot, bytes: Uint8Array) {
    slot.ready = bytes;
    this.flush();
  }

  /** Writes the answers that are ready, in order; ends the connection after the last one when it is closing. */
  flush() {
    const slots = this.slots;
    while (slots.length && slots[0]!.ready) {
      const slot = slots.shift()!;
      this.write(slot.ready!);
      if (slot.last) {
        this.closing = true;
        slots.length = 0;
      }
    }
    if (this.closing && !slots.length) this.end();
    else if (this.paused && slots.length < WAITING_MAX && !this.unsent) this.pause(false);
  }

  write(bytes: Uint8Array) {
    if (this.gone) return;
    if (this.unsent) {
      this.unsent = Buffer.concat([this.unsent, bytes]);
      return;
    }
    const n = this.socket.write(bytes);
    if (n < bytes.byteLength) {
      // kept until the socket drains; read no more from it meanwhile
      this.unsent = Buffer.from(bytes.subarray(Math.max(0, n)));
      this.pause(true);
    }
  }

  /** Reading stops while answers pile up or the socket has not taken what it was given: backpressure to the caller. */
  pause(on: boolean) {
    if (on === this.paused) return;
    this.paused = on;
    if (on) this.socket.pause();
    else this.socket.resume();
  }

  drain() {
    const rest = this.unsent;
    if (!rest) return;
    this.unsent = null;
    this.write(rest);
    if (!this.unsent) this.flush();
  }

  /**
   * Ends the connection once what it owes is out, as nginx's lingering close does: a FIN, then what the client still
   * sends is read and dropped (see `data`) until it closes too, LINGER_SECONDS or so at most. Closing outright while
   * a client is still sending (a body the answer refused or timed out) answers its next bytes with a reset, and a
   * reset can discard the answer before the client has read it.
   */
  end() {
    this.closing = true;
    if (this.unsent || this.slots.length || this.shut || this.gone) return;
    this.shut = true;
    this.socket.shutdown();
    this.socket.timeout(LINGER_SECONDS);
  }

  data(chunk: Uint8Array) {
    // a connection that is closing is read no further, but for the rest of a body still wanted
    if (this.closing && !(this.body && !this.body.settled)) return;
    const r = this.parser.execute(chunk);
    if (typeof r !== 'number') {
      this.begun = 0;
      this.body?.fail(badFraming());
      this.refuse(r.code === 'HPE_HEADER_OVERFLOW' ? BARE_431 : BARE_400);
      return;
    }
    if (!this.unfinishedHead(chunk)) this.begun = 0;
    else if (!this.begun) {
      this.begun = Date.now();
      this.edge.watch(this);
    }
  }

  /**
   * Whether the bytes read so far leave a request's head unfinished (its 10 s run from then). Reading bodies, llhttp
   * says where a head begins; otherwise a chunk that ends a head ends with its blank line (a body ends the connection
   * after its answer, so one is never waited on), and no call out of llhttp is made for it.
   */
  unfinishedHead(chunk: Uint8Array): boolean {
    if (this.edge.bodies) return this.inHead;
    const n = chunk.byteLength;
    return !(n >= 4 && chunk[n - 1] === 10 && chunk[n - 2] === 13 && chunk[n - 3] === 10 && chunk[n - 4] === 13);
  }
}

/** A handler that threw or rejected: the 500 problem every port of ours answers, the failure logged. */
const failed = (err: unknown): Response => SERVE_DEFAULTS.error(err as Error);

class Edge implements EdgeServer {
  readonly listener: Bun.TCPSocketListener<Connection>;
  readonly connections = new Set<Connection>();
  /** Connections in the middle of a request's head, checked once a second against HEADERS_TIMEOUT_MS. */
  readonly reading = new Set<Connection>();
  timer: ReturnType<typeof setInterval> | null = null;
  stopping: (() => void) | null = null;
  readonly fetch: EdgeHandler;
  readonly bodies: boolean;

  constructor(o: EdgeOptions) {
    this.fetch = o.fetch;
    this.bodies = o.bodies ?? false;
    const edge = this;
    this.listener = Bun.listen<Connection>({
      hostname: o.hostname,
      port: o.port,
      socket: {
        open(s) {
          s.setNoDelay(true);
          s.timeout(o.idleTimeout);
          const c = new Connection(s, edge);
          s.data = c;
          edge.connections.add(c);
        },
        data(s, chunk) {
          s.data.data(chunk);
        },
        drain(s) {
          s.data.drain();
        },
        timeout(s) {
          s.end();
        },
        error(s) {
          s.end();
        },
        close(s) {
          const c = s.data;
          c.closing = c.gone = true;
          c.body?.fail(new BodyAbandoned());
          c.parser.close();
          edge.connections.delete(c);
          edge.reading.delete(c);
          if (edge.stopping && !edge.connections.size) edge.stopping();
        },
      },
    });
  }

  get port() {
    return this.listener.port;
  }

  get url() {
    const host = this.listener.hostname;
    return new URL(`http://${host.includes(':') ? `[${host}]` : host}:${this.port}/`);
  }

  watch(c: Connection) {
    this.reading.add(c);
    this.timer ??= setInterval(() => this.sweep(), 1000);
  }

  /** Ends the connections whose request head has taken too long (a slowloris), as Bun.serve does. */
  sweep() {
    const now = Date.now();
    for (const c of this.reading) {
      if (!c.begun) this.reading.delete(c);
      else if (now - c.begun > HEADERS_TIMEOUT_MS) {
        this.reading.delete(c);
        c.socket.end();
      }
    }
    if (!this.reading.size && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  stop(force = false): Promise<void> {
    this.listener.stop();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const done = new Promise<void>((resolve) => {
      this.stopping = resolve;
    });
    if (!this.connections.size) this.stopping!();
    for (const c of this.connections) {
      if (force) c.socket.terminate();
      else c.end();
    }
    return done;
  }
}

/** The edge listening on `hostname:port`; throws EADDRINUSE as Bun.serve does (`listenOrExit`). */
export const serveEdge = (o: EdgeOptions): EdgeServer => new Edge(o);
