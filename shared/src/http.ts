/** Small HTTP helpers shared by the gateway and the services. */
import { randomBase62 } from './base62';

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
let counter = 0;
let lastMs = -1;
let msPart = '';
export function newRequestId(at: number = Date.now()): string {
  if (at !== lastMs) {
    lastMs = at;
    msPart = at.toString(36).padStart(9, '0');
  }
  return `req_${msPart}${processPrefix}${(counter++).toString(36).padStart(6, '0')}`;
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

/** Access lines go through one buffered writer (flushed every 100 ms and at exit), not a console call per request. */
const accessOut = Bun.stdout.writer({ highWaterMark: 64 * 1024 });
let flushTimer: ReturnType<typeof setTimeout> | null = null;
/** Lines not yet handed to the writer: one write per 32 K characters, not one per line (a native call each). */
let pending = '';
const PENDING_MAX = 32 * 1024;

/** Whether access lines are written (LOG_LEVEL info or debug): callers skip building them otherwise. */
export const accessLogOn = () => RANK.info >= threshold;

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
}

/** The time of a line, formatted once per millisecond: access lines come thousands a second. */
let isoAt = -1;
let isoText = '';
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoAt) {
    isoAt = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** Printable ASCII without `"` or `\\`: a JSON string as it stands between quotes. */
const JSON_SAFE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** A JSON string (or null): for the values a caller can shape (path, method, headers read by a service). */
const jsonText = (v: string | null): string => (v === null ? 'null' : JSON_SAFE.test(v) ? `"${v}"` : JSON.stringify(v));

/**
 * One JSON line per request (docs/design/observability.md): request id, trace id, surface, operation,
 * status, duration, key id; never a key. Built as one template (no object, no spread, the time
 * formatted once per millisecond) and written through a buffered writer flushed every 100 ms
 * and at exit: nearly free beside the request it describes (issue 22).
 */
export function logRequest(f: AccessLine) {
  if (RANK.info < threshold) return;
  const problem = f.problem ? `,"problem":"${f.problem}"` : '';
  pending += `{"level":"info","time":"${isoNow()}","service":${processJson},"msg":"request","requestId":${jsonText(f.requestId)},"traceId":${jsonText(f.traceId)},"surface":"${f.surface}","operation":"${f.operation}","method":${jsonText(f.method)},"path":${jsonText(f.path)},"status":${f.status},"durationMs":${f.durationMs},"keyId":${jsonText(f.keyId)}${problem}}\n`;
  if (pending.length >= PENDING_MAX) {
    accessOut.write(pending);
    pending = '';
  }
  if (!flushTimer) {
    flushTimer = setTimeout(flushLogs, 100);
    (flushTimer as { unref?(): void }).unref?.();
  }
}

export function flushLogs() {
  if (flushTimer) clearTimeout(flushTimer);
  flushTimer = null;
  if (pending) accessOut.write(pending);
  pending = '';
  accessOut.flush();
}
