/**
 * The CLI as a client of the Management API (docs/cli.md, `webhook:listen` and `event:trigger`): calls over HTTP with
 * an API key, as any integration makes them, so the gateway's rules (scopes, test mode, limits) apply and a write
 * records its events, request id and webhooks as any other.
 */
import { type KeyMode, parseKey } from '@studio/shared';

/** A refused call: the problem's status, code and detail, and how long a 429 asks to wait. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/** `--key`: a well-formed secret key, else an error; `needs` says what a publishable one lacks. */
export function secretKeyOf(text: string, needs: string): { key: string; mode: KeyMode } {
  const parsed = parseKey(text.trim());
  if (!parsed) throw new Error(`--key is not an API key (svc_sk_… or svc_sk_test_…, as key:create printed it)`);
  if (parsed.kind !== 'secret') throw new Error(`--key is a publishable key: ${needs}`);
  return { key: text.trim(), mode: parsed.mode };
}

/** `Retry-After` (seconds, or an HTTP date) in milliseconds; null when absent or unreadable. */
function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

export interface Answer<T> {
  body: T;
  /** The call's `X-Request-Id`: what its events carry as `requestId`. */
  requestId: string;
}
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export type Api = ReturnType<typeof managementApi>;
/** The longest a 429's Retry-After is waited inside a call; a longer one is the caller's to handle. */
const MAX_RATE_WAIT_MS = 5_000;

/** Calls to the Management API at `baseUrl` with `key`; each write carries an Idempotency-Key of its own. */
export function managementApi(baseUrl: string, key: string, timeoutMs = 10_000) {
  const base = baseUrl.replace(/\/+$/, '');
  /** One request; a 429 that asks for a short wait is waited and sent again, with the same Idempotency-Key. */
  async function call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Answer<T>> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
    if (method !== 'GET') headers['idempotency-key'] = crypto.randomUUID();
    if (body !== undefined) headers['content-type'] = 'application/json';
    for (let tries = 1; ; tries++) {
      try {
        return await send<T>(method, path, headers, body, signal);
      } catch (err) {
        const wait = err instanceof ApiError && err.status === 429 ? err.retryAfterMs : null;
        if (wait === null || wait > MAX_RATE_WAIT_MS || tries >= 3 || signal?.aborted) throw err;
        await Bun.sleep(wait);
      }
    }
  }
  async function send<T>(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<Answer<T>> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const res = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: a proxy's page, or not our API at all; said below with the status
    }
    if (!res.ok) {
      const p = (json ?? {}) as { code?: string; detail?: string; title?: string };
      const code = p.code ?? `http_${res.status}`;
      const detail = p.detail ?? p.title ?? (text.slice(0, 200) || res.statusText);
      throw new ApiError(
        res.status,
        code,
        `${method} ${path}: ${res.status} ${code}: ${detail}`,
        retryAfterMs(res.headers.get('retry-after')),
      );
    }
    return { body: json as T, requestId: res.headers.get('x-request-id') ?? '' };
  }
  return {
    call,
    get: <T>(path: string, signal?: AbortSignal) => call<T>('GET', path, undefined, signal),
    /** The first record of a list (walking its pages) that `match` accepts, or null. */
    async find<T>(path: string, match: (r: T) => boolean = () => true): Promise<T | null> {
      const sep = path.includes('?') ? '&' : '?';
      let cursor: string | null = null;
      do {
        const page: Page<T> = (
          await call<Page<T>>('GET', `${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        ).body;
        const hit = page.data.find(match);
        if (hit) return hit;
        cursor = page.next_cursor;
      } while (cursor);
      return null;
    },
  };
}
