/** Small HTTP helpers shared by the gateway and the services. */
import { randomBase62 } from './base62';
import { putLatin1 as put } from './text-buffer';

/** The one spelling of the JSON media type on every answer we build (RFC 8259 defines no charset parameter). */
export const JSON_TYPE = 'application/json';

/** A JSON answer with that spelling (`Response.json` would say `application/json;charset=utf-8`). */
export function jsonResponse(
  body: unknown,
  init: { status?: number; headers?: Record<string, string> } = {},
): Response {
  return new Response(JSON.stringify(body), {
    status: init.status ?? 200,
    headers: { ...init.headers, 'content-type': JSON_TYPE },
  });
}

/**
 * Unique, not secret: the time the request arrived (ms since the epoch, 9 base-36
 * digits), a random prefix per process and a counter (a UUID per request cost more than
 * the rest of a cached answer's bookkeeping). The time is the activity entry's `at`,
 * so the dashboard finds an entry by its request id through the log's primary key
 * (`requestTimeOf`) instead of a B-tree of request ids written on every call.
 */
const processPrefix = randomBase62(8);
/** Counts from 36^5, so it is six base-36 digits without padding (seven after two billion ids). */
let counter = 36 ** 5;
let lastMs = -1;
/** `req_`, the time and the prefix: one string per millisecond. */
let head = '';
/** The counter's last two base-36 digits, each made once: an id is its head joined to one, no number formatted a call. */
const LOW = 36 * 36;
const LOW_DIGITS = Array.from({ length: LOW }, (_, i) => i.toString(36).padStart(2, '0'));
/** The head with the counter's other digits, and those digits' value (`counter` over 36²) when it was made. */
let headHigh = '';
let high = -1;
export function newRequestId(at: number = Date.now()): string {
  const n = counter++;
  const h = Math.floor(n / LOW);
  if (at !== lastMs) {
    lastMs = at;
    head = `req_${at.toString(36).padStart(9, '0')}${processPrefix}`;
    high = -1;
  }
  if (h !== high) {
    high = h;
    headHigh = head + h.toString(36);
  }
  return headHigh + LOW_DIGITS[n - h * LOW]!;
}

const REQUEST_ID_FORMAT = /^req_([0-9a-z]{9})[0-9A-Za-z]{8}[0-9a-z]{6,12}$/;
/** When a request id made by `newRequestId` says its request arrived (ms), or null for any other string (ids made before it carried the time). */
export function requestTimeOf(requestId: string): number | null {
  const m = REQUEST_ID_FORMAT.exec(requestId);
  return m ? parseInt(m[1]!, 36) : null;
}

/** Strong ETag of a body (a fast non-cryptographic 64-bit hash is enough to tell versions apart). */
export const etagOf = (body: string | Uint8Array): string => `"${Bun.hash(body).toString(36)}"`;

export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
let threshold = RANK.info;
/** Set once by each process's main.ts from its config (`LOG_LEVEL`); lines below it are not written. Returns the level it replaces. */
export function setLogLevel(level: LogLevel): LogLevel {
  const before = (Object.keys(RANK) as LogLevel[]).find((l) => RANK[l] === threshold)!;
  threshold = RANK[level];
  return before;
}

/**
 * The name every line of this process carries as `service` (gateway, storefront-service,
 * management-service), so the gateway's and a service's line of one request can be told
 * apart. Process-wide by nature: set once by each main.ts; apps built together in one
 * process (the tests) pass `service` on their own lines instead.
 */
let processName = 'unnamed';
let processJson = JSON.stringify(processName);
export function setLogProcess(name: string) {
  processName = name;
  processJson = JSON.stringify(name);
}

/** One JSON line: warnings and errors on stderr, the rest on stdout. */
export function log(level: LogLevel, msg: string, fields: Record<string, unknown> = {}) {
  if (RANK[level] < threshold) return;
  const line = JSON.stringify({ level, time: new Date().toISOString(), service: processName, msg, ...fields });
  if (RANK[level] >= RANK.warn) console.error(line);
  else console.log(line);
}

/** Access lines go through one buffered writer (flushed every 100 ms and when the process drains), not a console call per request. */
const accessOut = Bun.stdout.writer({ highWaterMark: 64 * 1024 });
let flushTimer: ReturnType<typeof setTimeout> | null = null;

/**
 * Whether a request's access line is written: at LOG_LEVEL info or debug, every one; above, a server error's still
 * (its line says `"level":"error"`), so that `warn` keeps a trace of every 5xx. Callers skip building it otherwise.
 */
export const accessLogOn = (status = 0) => RANK[status >= 500 ? 'error' : 'info'] >= threshold;

/** What an access line says of one request. */
export interface AccessLine {
  requestId: string | null;
  traceId: string | null;
  /** A closed set (gateway surfaces, a service's name, `dashboard`): written as is. */
  surface: string;
  /** An operations-table id, a dashboard route or `unknown`: a closed set, written as is. */
  operation: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  keyId: string | null;
  /** The problem code of a refusal (closed vocabulary). */
  problem?: string;
  /** `test`: a test key's call, on a sandbox (docs/design/test-mode.md); a line without `mode` is live. */
  mode?: 'live' | 'test';
  /**
   * The request id and trace id were made in this process (`newRequestId`, `startTrace`): letters, digits and `_`
   * by construction, so they are written without the check a value a caller can shape gets.
   */
  ownIds?: boolean;
}

/** The time of a line, formatted once per millisecond: access lines come thousands a second. */
let isoAt = -1;
let isoText = '';
function isoOf(ms: number): string {
  if (ms !== isoAt) {
    isoAt = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** Printable ASCII without `"` or `\\`: a JSON string as it stands between quotes. */
const JSON_SAFE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * Access lines waiting to be written, as their fields in one flat array reused for every batch:
 * a request stores thirteen values and allocates nothing, and the lines are written in one loop off
 * the request path. Built one by one on the request path, they cost the cached read 10 % of the
 * gateway's CPU; queued, and written as bytes, 4.8 % (docs/benchmarks.md, issue 22).
 */
const FIELDS = 13;
/** A path's characters a line keeps, as an activity entry does: a keyless caller may send 16 KB of it a call. */
const PATH_LOGGED_MAX = 512;
const QUEUED_MAX = 512;
const queue: (string | number | null)[] = new Array(QUEUED_MAX * FIELDS).fill(null);
let queued = 0;

/**
 * One JSON line per request (docs/design/observability.md): request id, trace id, surface, operation,
 * status, duration, key id; never a key. Its fields are queued now (with the time) and the line is
 * written with the others of its batch, at most 512 lines or 100 ms later, or when the process drains
 * (`flushLogs`).
 */
export function logRequest(f: AccessLine) {
  if (!accessLogOn(f.status)) return;
  const i = queued * FIELDS;
  queue[i] = Date.now();
  queue[i + 1] = f.requestId;
  queue[i + 2] = f.traceId;
  queue[i + 3] = f.surface;
  queue[i + 4] = f.operation;
  queue[i + 5] = f.method;
  queue[i + 6] = f.path.length > PATH_LOGGED_MAX ? f.path.slice(0, PATH_LOGGED_MAX) : f.path;
  queue[i + 7] = f.status;
  queue[i + 8] = f.durationMs;
  queue[i + 9] = f.keyId;
  queue[i + 10] = f.problem ?? null;
  queue[i + 11] = f.ownIds === true ? 1 : 0;
  queue[i + 12] = f.mode === 'test' ? 1 : 0;
  if (++queued === QUEUED_MAX) writeQueued();
  if (!flushTimer) {
    flushTimer = setTimeout(flushLogs, 100);
    (flushTimer as { unref?(): void }).unref?.();
  }
}

/** Bytes of lines handed to the writer at a time (it copies them: the buffer is reused). */
const LINES_MAX = 64 * 1024;
const LINES = Buffer.allocUnsafeSlow(LINES_MAX);

/**
 * The queued lines, each written a field at a time into LINES by native copies and handed to the writer 64 KB at a
 * time: no string is made for a line. A line built by a template (a rope of 27 pieces, then flattened into the
 * batch's text) made about 900 bytes of garbage a request, half of what the gateway allocates for a cached read.
 */
function writeQueued() {
  const q = queue;
  const end = queued * FIELDS;
  let p = 0;
  for (let i = 0; i < end; i += FIELDS) {
    const most = lineBytesMost(q, i);
    if (p + most > LINES.length) {
      if (p) accessOut.write(LINES.subarray(0, p));
      p = 0;
    }
    if (most <= LINES.length) p = writeLine(LINES, p, q, i);
    else {
      // a line longer than the buffer (a service's caller-sent request id of 16 KB): a buffer of its own
      const own = Buffer.allocUnsafe(most);
      accessOut.write(own.subarray(0, writeLine(own, 0, q, i)));
    }
  }
  if (p) accessOut.write(LINES.subarray(0, p));
  q.fill(null, 0, end);
  queued = 0;
}

const lengthOf = (v: unknown) => (v === null ? 4 : (v as string).length);
/** The most bytes a queued line can take: a string a caller shapes is at most 6 bytes a character as JSON (`\u0000`). */
const lineBytesMost = (q: (string | number | null)[], i: number) =>
  512 +
  processJson.length +
  (q[i + 3] as string).length +
  (q[i + 4] as string).length +
  lengthOf(q[i + 10]) +
  6 * (lengthOf(q[i + 1]) + lengthOf(q[i + 2]) + lengthOf(q[i + 5]) + lengthOf(q[i + 6]) + lengthOf(q[i + 9]));

/** A JSON string (or null) a caller can shape (path, method, headers read by a service), or one made here (`own`). */
function putText(b: Buffer, p: number, v: string | null, own = false): number {
  if (v === null) return put(b, p, 'null');
  if (!own && !JSON_SAFE.test(v)) return p + b.write(JSON.stringify(v), p, 'utf8');
  b[p] = 34; // '"'
  p = put(b, p + 1, v);
  b[p] = 34;
  return p + 1;
}

/** An integer's decimal digits (written by hand when it is not negative). */
function putInt(b: Buffer, p: number, n: number): number {
  if (!(n >= 0 && Number.isSafeInteger(n))) return put(b, p, String(n));
  let digits = 1;
  for (let t = n; t >= 10; t = Math.floor(t / 10)) digits++;
  for (let d = p + digits - 1; d >= p; d--) {
    const q = Math.floor(n / 10);
    b[d] = 48 + n - q * 10;
    n = q;
  }
  return p + digits;
}

/** A duration as JSON writes it (`0.21`, `3`, `12.5`): by hand when it has two decimals at most (as recorded). */
function putDuration(b: Buffer, p: number, ms: number): number {
  const hundredths = Math.round(ms * 100);
  if (!(ms >= 0 && hundredths / 100 === ms && hundredths < 2 ** 52)) return put(b, p, String(ms));
  const whole = Math.floor(hundredths / 100);
  const cents = hundredths - whole * 100;
  p = putInt(b, p, whole);
  if (cents === 0) return p;
  b[p] = 46; // '.'
  b[p + 1] = 48 + Math.floor(cents / 10);
  if (cents % 10 === 0) return p + 2;
  b[p + 2] = 48 + (cents % 10);
  return p + 3;
}

/** The start of a line, up to its request id: the same for every line of one millisecond and level. */
const lineStart = { info: { at: -1, text: '' }, error: { at: -1, text: '' } };
function startOf(ms: number, level: 'info' | 'error'): string {
  const s = lineStart[level];
  if (s.at !== ms) {
    s.at = ms;
    s.text = `{"level":"${level}","time":"${isoOf(ms)}","service":${processJson},"msg":"request","requestId":`;
  }
  return s.text;
}

/** `,"surface":"…","operation":"…","method":`, made once a surface and operation (closed sets: `AccessLine`). */
const middles = new Map<string, Map<string, string>>();
function middleOf(surface: string, operation: string): string {
  let bySurface = middles.get(surface);
  if (!bySurface) middles.set(surface, (bySurface = new Map()));
  let text = bySurface.get(operation);
  if (text === undefined)
    bySurface.set(operation, (text = `,"surface":"${surface}","operation":"${operation}","method":`));
  return text;
}

/** `,"status":…,"durationMs":`, made once a status (any other number each time). */
const statusParts: string[] = [];
const statusPart = (status: number): string =>
  Number.isInteger(status) && status >= 100 && status < 1000
    ? (statusParts[status] ??= `,"status":${status},"durationMs":`)
    : `,"status":${status},"durationMs":`;

/** The queued line at `i` into `b` at `p`, with its newline; returns where it ended. */
function writeLine(b: Buffer, p: number, q: (string | number | null)[], i: number): number {
  const status = q[i + 7] as number;
  const own = q[i + 11] === 1;
  p = put(b, p, startOf(q[i] as number, status >= 500 ? 'error' : 'info'));
  p = putText(b, p, q[i + 1] as string | null, own);
  p = put(b, p, ',"traceId":');
  p = putText(b, p, q[i + 2] as string | null, own);
  p = put(b, p, middleOf(q[i + 3] as string, q[i + 4] as string));
  p = putText(b, p, q[i + 5] as string);
  p = put(b, p, ',"path":');
  p = putText(b, p, q[i + 6] as string);
  p = put(b, p, statusPart(status));
  p = putDuration(b, p, q[i + 8] as number);
  p = put(b, p, ',"keyId":');
  p = putText(b, p, q[i + 9] as string | null);
  const problem = q[i + 10] as string | null;
  if (problem) {
    p = put(b, p, ',"problem":"');
    p = put(b, p, problem);
    b[p++] = 34;
  }
  if (q[i + 12] === 1) p = put(b, p, ',"mode":"test"');
  b[p] = 125; // '}'
  b[p + 1] = 10;
  return p + 2;
}

export function flushLogs() {
  if (flushTimer) clearTimeout(flushTimer);
  flushTimer = null;
  writeQueued();
  accessOut.flush();
}
