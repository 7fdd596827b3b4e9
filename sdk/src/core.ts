/**
 * One call, safely retried (docs/design/sdk.md): every write carries one `Idempotency-Key` for the whole call, so a
 * retry after a lost answer is replayed by the API, never acted twice; connection errors, timeouts, 408, 409
 * `idempotency_request_in_progress`, 429 and 5xx are retried with exponential backoff and jitter, waiting what
 * `Retry-After` (or an empty `RateLimit` bucket) asks.
 */
import { ConnectionError, errorOf, StudioApiError, TimeoutError } from './errors.js';
import type { RequestOptions } from './types.js';
import { VERSION } from './version.js';

/** What the SDK calls to send a request: the global `fetch`, or yours. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

export interface CoreOptions {
  apiKey: string;
  baseUrl: string;
  maxRetries: number;
  timeout: number;
  fetch: Fetch;
  appInfo?: { name: string; version?: string };
}

export interface Call {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  options?: RequestOptions;
}

/** A browser (or a browser's worker) names itself; Bun, Node and Deno say their own name. */
const inBrowser = () => typeof navigator !== 'undefined' && navigator.userAgent?.startsWith('Mozilla/') === true;

const INITIAL_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** The longest server-asked wait the SDK sleeps through; beyond it, the error goes to the caller. */
const MAX_ASKED_WAIT_MS = 60_000;

/** A fresh idempotency key: a v4 UUID where `crypto.randomUUID` exists (secure contexts), else 128 random bits. */
function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** What the answer asks us to wait, in ms: `Retry-After` (seconds or a date), else an empty `RateLimit` bucket's `t`. */
export function askedWait(headers: Headers): number | null {
  const after = headers.get('retry-after');
  if (after) {
    const seconds = Number(after);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const at = Date.parse(after);
    if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  }
  const limit = headers.get('ratelimit');
  if (limit && /;\s*r=0\b/.test(limit)) {
    const t = /;\s*t=(\d+)/.exec(limit)?.[1];
    if (t) return Number(t) * 1000;
  }
  return null;
}

/** Exponential backoff with jitter: 0.5 s, 1 s, 2 s … up to 8 s, each up to a quarter shorter. */
export const backoff = (retry: number) =>
  Math.min(INITIAL_DELAY_MS * 2 ** retry, MAX_DELAY_MS) * (1 - Math.random() * 0.25);

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });
}

const retryableStatus = (status: number, code: string | undefined) =>
  status === 408 || status === 429 || status >= 500 || (status === 409 && code === 'idempotency_request_in_progress');

export class Core {
  private readonly headers: Record<string, string>;

  constructor(readonly options: CoreOptions) {
    this.headers = { authorization: `Bearer ${options.apiKey}` };
    // a browser sends its own, and the Storefront's CORS allows no other
    if (!inBrowser()) {
      const app = options.appInfo
        ? ` ${options.appInfo.name}${options.appInfo.version ? `/${options.appInfo.version}` : ''}`
        : '';
      this.headers['user-agent'] = `studio-sdk-typescript/${VERSION}${app}`;
    }
  }

  url(path: string, query?: Record<string, unknown>): string {
    let url = this.options.baseUrl + path;
    if (query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.append(k, String(v));
      const q = params.toString();
      if (q) url += `?${q}`;
    }
    return url;
  }

  /** The call, retried as it may be; its parsed JSON answer, or a `StudioApiError`. */
  async request<T>(call: Call): Promise<T> {
    const o = call.options ?? {};
    const maxRetries = o.maxRetries ?? this.options.maxRetries;
    const headers: Record<string, string> = { ...this.headers };
    if (call.method !== 'GET') headers['idempotency-key'] = o.idempotencyKey ?? newKey();
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = {
      method: call.method,
      headers,
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
    };
    const url = this.url(call.path, call.query);
    for (let retry = 0; ; retry++) {
      let wait: number | null = null;
      try {
        return await this.attempt<T>(url, init, o);
      } catch (err) {
        if (!(err instanceof StudioApiError) || retry >= maxRetries) throw err;
        if (err.status !== undefined) {
          if (!retryableStatus(err.status, err.code)) throw err;
          wait = err.headers ? askedWait(err.headers) : null;
          if (wait !== null && wait > MAX_ASKED_WAIT_MS) throw err;
        }
      }
      await sleep(wait ?? backoff(retry), o.signal);
    }
  }

  private async attempt<T>(url: string, init: RequestInit, o: RequestOptions): Promise<T> {
    const timeout = o.timeout ?? this.options.timeout;
    const controller = new AbortController();
    const abort = () => controller.abort(o.signal!.reason);
    if (o.signal?.aborted) throw o.signal.reason;
    o.signal?.addEventListener('abort', abort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    try {
      const res = await this.options.fetch(url, { ...init, signal: controller.signal });
      const text = await res.text();
      if (res.ok) return (text ? JSON.parse(text) : undefined) as T;
      let body: Record<string, unknown> | undefined;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      throw errorOf(res.status, body, res.headers);
    } catch (err) {
      if (err instanceof StudioApiError) throw err;
      if (timedOut) throw new TimeoutError(`no answer within ${timeout} ms`, { cause: err });
      if (o.signal?.aborted) throw o.signal.reason;
      throw new ConnectionError(`connection failed: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', abort);
    }
  }
}
