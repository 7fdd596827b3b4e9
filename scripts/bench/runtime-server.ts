#!/usr/bin/env bun
/**
 * One server for `bun run bench:runtime`: a small JSON answer from memory, with its headers on a
 * reused `Headers` (as the gateway's cache keeps them), plus the runtime calls the gateway makes on every
 * request named by `call` (`none`: only the answer). `listen` is no Bun.serve but a hand-written HTTP/1.1 front on
 * Bun.listen reading and answering what `cached` does (GET only, no bodies, one request at a time a connection, as
 * wrk sends them: enough to weigh it, not to serve anyone); `llhttp` the same front with llhttp, the parser Bun builds
 * in, reading the requests, and `llhttp-fetch` that front going through a `Request` and a `Response`. Run as its own
 * process: `bun scripts/bench/runtime-server.ts <port> <call>`.
 */
import { dateNow } from '@studio/gateway/edge/server';
import { SERVE_DEFAULTS } from '@studio/shared/io/serve';
import { CALLS, type RuntimeCall } from './runtime-calls';

const [port, call] = process.argv.slice(2) as [string, RuntimeCall];
if (!CALLS.includes(call)) throw new Error(`call: one of ${CALLS.join(', ')}`);

const text = JSON.stringify({ data: Array.from({ length: 20 }, (_, i) => ({ id: `cls_${i}` })) });
const body = new Blob([text]);
const headers = new Headers({ 'content-type': 'application/json', 'x-content-type-options': 'nosniff' });
const hmac = new Bun.CryptoHasher('sha256', 'bench-runtime-secret');
let n = 0;
/** What the call produced, kept so the compiler cannot drop it. */
let sink = 0;

/** A cached answer's own headers (request id, traceresponse, RateLimit), new values each request. */
const requestId = () => `req_0mwwbekryStHSiIVU1${n}`;
const traceresponse = () => `00-ec14fcecbbe6e1570c9eff582bb22dc2-1de5f90b327e${n % 10}e7d-01`;
const rateLimit = () => `"key";r=${n % 1000};t=1`;

function setOwn() {
  headers.set('x-request-id', requestId());
  headers.set('traceresponse', traceresponse());
  headers.set('ratelimit', rateLimit());
}

/** The headers a cached read reads (the key, trace, declared length, validator, codings, user agent). */
const READ = ['authorization', 'traceparent', 'content-length', 'if-none-match', 'accept-encoding', 'user-agent'];

function readHeaders(h: { get(name: string): string | null | undefined }) {
  for (const name of READ) sink += h.get(name)?.length ?? 0;
}

/** What both fronts on Bun.listen write: the body as bytes, the kept headers as text, into one output buffer. */
const bytes = Buffer.from(text);
let kept = '';
headers.forEach((v, k) => {
  kept += `${k}: ${v}\r\n`;
});
const out = Buffer.allocUnsafe(64 * 1024);

/** A front's answer head but its length: the kept headers, the three own, and Date. */
const ownHead = () =>
  `HTTP/1.1 200 OK\r\n${kept}x-request-id: ${requestId()}\r\ntraceresponse: ${traceresponse()}\r\nratelimit: ${rateLimit()}\r\ndate: ${dateNow()}\r\n`;

/** `head`, Content-Length and the body written into `out` at `at`; the offset after them. */
function writeAnswer(head: string, at: number): number {
  const end = at + out.write(`${head}content-length: ${bytes.length}\r\n\r\n`, at, 'latin1');
  return end + bytes.copy(out, end);
}

if (call === 'listen') listenFront();
else if (call === 'llhttp') llhttpFront(false);
else if (call === 'llhttp-fetch') llhttpFront(true);
else
  Bun.serve({
    ...SERVE_DEFAULTS,
    hostname: '127.0.0.1',
    port: Number(port),
    fetch(req, server) {
      n++;
      switch (call) {
        case 'url':
          sink += req.url.length;
          break;
        case 'headers':
          sink += req.headers.get('authorization')?.length ?? 0;
          break;
        case 'requestIP':
          sink += server.requestIP(req)?.address.length ?? 0;
          break;
        case 'headers.set':
          setOwn();
          break;
        case 'hmac':
          sink += hmac
            .copy()
            .update(`${n}\nGET\n/v1/instructors\nstu_1\nkey_1\nscopes\nop\nreq_${n}\n\n`)
            .digest('hex').length;
          break;
        case 'cached':
          sink += req.url.length;
          readHeaders(req.headers);
          sink += server.requestIP(req)?.address.length ?? 0;
          setOwn();
          break;
      }
      return new Response(body, { status: 200, headers });
    },
  });

/**
 * The `cached` calls' work on a front of our own: each request's line and headers parsed from the bytes, the caller's
 * address read when the connection opens, and the answer's head (the kept headers, the three own, Date and
 * Content-Length) and body written in one `write` for all the requests a read brought.
 */
function listenFront() {
  const latin1 = new TextDecoder('latin1');
  Bun.listen<{ address: string; pending: string }>({
    hostname: '127.0.0.1',
    port: Number(port),
    socket: {
      open(s) {
        s.data = { address: s.remoteAddress, pending: '' };
      },
      data(s, chunk) {
        let rest = s.data.pending + latin1.decode(chunk);
        let written = 0;
        for (let end = rest.indexOf('\r\n\r\n'); end >= 0; end = rest.indexOf('\r\n\r\n')) {
          const lines = rest.slice(0, end).split('\r\n');
          rest = rest.slice(end + 4);
          const [method = '', target = ''] = lines[0]!.split(' ');
          const h = new Map<string, string>();
          for (let i = 1; i < lines.length; i++) {
            const line = lines[i]!;
            const colon = line.indexOf(':');
            h.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
          }
          n++;
          sink += method.length + target.length + s.data.address.length;
          readHeaders(h);
          written = writeAnswer(ownHead(), written);
        }
        s.data.pending = rest;
        if (written) s.write(out.subarray(0, written));
      },
    },
  });
}

/**
 * The same front with the request parsed by llhttp, Node's HTTP/1.1 parser, which Bun builds in and exposes as Node
 * does (`process.binding('http_parser')`, the `HTTPParser` of `node:_http_common`): one parser a connection, the
 * request line and headers handed over in one callback once they are whole. What a front of our own would cost
 * without a parser of our own. `fetchTypes`: the front hands the work a `Request` and writes out a `Response`, as a
 * pipeline built on the fetch types would need.
 */
function llhttpFront(fetchTypes: boolean) {
  const { HTTPParser } = process.binding('http_parser') as { HTTPParser: LlhttpParserClass };
  /** The `cached` calls on a `Request` made of what llhttp read, and the head of the `Response` they answer, read back. */
  const throughFetchTypes = (url: string, raw: string[]) => {
    const pairs: [string, string][] = [];
    for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
    const req = new Request(`http://127.0.0.1${url}`, { headers: pairs });
    sink += req.url.length;
    readHeaders(req.headers);
    setOwn();
    const res = new Response(body, { status: 200, headers });
    let head = `HTTP/1.1 ${res.status} OK\r\n`;
    res.headers.forEach((v, k) => {
      head += `${k}: ${v}\r\n`;
    });
    return `${head}date: ${dateNow()}\r\n`;
  };
  /** `head`: the answer's status line and headers but its length, once the request's headers are read. */
  type Conn = { parser: LlhttpParser; written: number; address: string; head: string };
  Bun.listen<Conn>({
    hostname: '127.0.0.1',
    port: Number(port),
    socket: {
      open(s) {
        const parser = new HTTPParser();
        parser.initialize(HTTPParser.REQUEST, {}, 16 * 1024, 0);
        const conn: Conn = { parser, written: 0, address: s.remoteAddress, head: '' };
        parser[HTTPParser.kOnHeadersComplete] = (_major, _minor, raw, _method, url) => {
          n++;
          sink += url.length + conn.address.length;
          if (fetchTypes) conn.head = throughFetchTypes(url, raw);
          else {
            const h = new Map<string, string>();
            for (let i = 0; i < raw.length; i += 2) h.set(raw[i]!.toLowerCase(), raw[i + 1]!);
            readHeaders(h);
            conn.head = ownHead();
          }
          return 0;
        };
        parser[HTTPParser.kOnMessageComplete] = () => {
          conn.written = writeAnswer(conn.head, conn.written);
        };
        s.data = conn;
      },
      data(s, chunk) {
        const conn = s.data;
        conn.written = 0;
        conn.parser.execute(chunk);
        if (conn.written) s.write(out.subarray(0, conn.written));
      },
      close(s) {
        s.data.parser.close();
      },
    },
  });
}

/** What this file uses of llhttp's binding (Node's `HTTPParser`, as Bun exposes it). */
interface LlhttpParser {
  initialize(kind: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(chunk: Uint8Array): number | Error;
  close(): void;
  /** `kOnHeadersComplete` is given the version, headers (name, value, …), method's index and target; the rest nothing we read. */
  [callback: number]: (major: number, minor: number, headers: string[], method: number, url: string) => unknown;
}
interface LlhttpParserClass {
  new (): LlhttpParser;
  REQUEST: number;
  kOnHeadersComplete: number;
  kOnMessageComplete: number;
}

process.on('SIGTERM', () => process.exit(sink < 0 ? 1 : 0));
