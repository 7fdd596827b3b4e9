/**
 * `webhook:listen` (docs/cli.md): follows a key's events feed through the Management API and POSTs each new event to
 * a local URL, signed as our dispatcher signs a delivery (Standard Webhooks, the same body builder and signing), with
 * a secret made for the session. No endpoint is registered and the stack is not touched: it is a client of the API.
 */
import { eventBody, newSigningSecret, secretBytes, signatureHeader } from '@studio/shared/webhooks';
import { type Api, ApiError, managementApi, type Page, secretKeyOf } from './api';

/** An event as the feed serves it (docs/design/events.md). */
interface FeedEvent {
  id: string;
  type: string;
  createdAt: string;
  data: unknown;
  requestId: string | null;
}

export interface ListenOptions {
  apiUrl: string;
  key: string;
  forwardTo: string;
  /** Forward the events after this one (else only those recorded after the start). */
  after?: string;
  /** Forward every event the feed still holds, then the new ones. */
  fromStart?: boolean;
  intervalMs?: number;
  signal: AbortSignal;
  /** One line for the person watching: the secret, each delivery. */
  say: (line: string) => void;
  /** One line about the feed: an error, a wait. */
  warn: (line: string) => void;
}

const FORWARD_TIMEOUT_MS = 10_000; // as the dispatcher's attempt (docs/design/webhooks.md)
const MAX_BACKOFF_MS = 30_000;
/** A refusal that waiting will not change: the key is wrong, revoked or may not read the feed. */
const FATAL = new Set([400, 401, 403, 404, 422]);

function forwardUrl(text: string): URL {
  if (!URL.canParse(text))
    throw new Error(`--forward-to must be a URL such as http://localhost:3000/hook, not ${text}`);
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`--forward-to must be an http:// or https:// URL, not ${text}`);
  return url;
}

/** `ms` of sleep that an abort cuts short. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/**
 * The feed after `after` (from its start when null), page by page: `next_cursor` while it is set (a page of a key that
 * reads only some resources may be empty and still have one), then done. `handle` runs for each event in order.
 */
async function walk(api: Api, after: string | null, signal: AbortSignal, handle: (e: FeedEvent) => Promise<void>) {
  let query = `limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`;
  for (;;) {
    const page = (await api.get<Page<FeedEvent>>(`/v1/events?${query}`, signal)).body;
    for (const e of page.data) {
      if (signal.aborted) return;
      await handle(e);
    }
    if (!page.next_cursor || signal.aborted) return;
    query = `limit=100&cursor=${encodeURIComponent(page.next_cursor)}`;
  }
}

/** What a delivery's line says after the arrow: the status and time, or why it failed. */
async function deliver(url: URL, secret: Uint8Array, e: FeedEvent, signal: AbortSignal): Promise<string> {
  // the dispatcher's body: the event as GET /v1/events/{eventId} serves it
  const body = eventBody({ ...e, createdAt: new Date(e.createdAt) });
  const timestamp = Math.floor(Date.now() / 1000);
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'StudioAPI-CLI/1.0 (webhook:listen)',
        'webhook-id': e.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader([secret], e.id, timestamp, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
      // a local receiver is never reached through HTTP(S)_PROXY (Bun takes it from the environment unless told false)
      proxy: false as unknown as string,
    });
    await res.body?.cancel().catch(() => {});
    const ms = Math.round(performance.now() - started);
    return `${res.status} ${res.ok ? '' : 'failed, not retried '}(${ms} ms)`;
  } catch (err) {
    if (signal.aborted) return 'stopped before an answer';
    const x = err as { name?: string; code?: string; message?: string };
    const why =
      x.name === 'TimeoutError'
        ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
        : (x.code ?? x.message ?? String(err));
    return `failed: ${why} (not retried)`;
  }
}

/** Forwards until `signal` aborts; returns how many events it forwarded and how many of them failed. */
export async function listen(o: ListenOptions): Promise<{ forwarded: number; failed: number }> {
  const { key, mode } = secretKeyOf(
    o.key,
    'the events feed needs a secret key with a :read scope (svc_sk_… or svc_sk_test_…)',
  );
  const url = forwardUrl(o.forwardTo);
  const api = managementApi(o.apiUrl, key);
  const secret = newSigningSecret();
  const hmac = secretBytes(secret);
  const interval = o.intervalMs ?? 1_000;
  let last: string | null = o.after ?? null;
  let forwarded = 0;
  let failed = 0;
  let seeking = !o.fromStart && !o.after; // first, find the newest event, forwarding nothing
  let listening = false; // said once the feed has answered
  let delay = interval;

  o.say(`Ready: forwarding the ${mode} events of this key's studio from ${o.apiUrl} to ${url.href}`);
  o.say(`Webhook signing secret for this session: ${secret}`);
  while (!o.signal.aborted) {
    try {
      await walk(api, last, o.signal, async (e) => {
        if (!seeking) {
          const outcome = await deliver(url, hmac, e, o.signal);
          forwarded++;
          if (!/^2\d\d /.test(outcome)) failed++;
          o.say(`${new Date().toISOString()}  ${e.type}  ${e.id}  -> ${outcome}`);
        }
        last = e.id;
      });
      if (!listening) {
        o.say(last ? `Listening for the events after ${last} (Ctrl-C to stop)` : 'Listening (Ctrl-C to stop)');
        [listening, seeking] = [true, false];
      }
      delay = interval;
    } catch (err) {
      if (o.signal.aborted) break;
      if (err instanceof ApiError && err.status === 410 && last) {
        // `last` aged out of the 30-day retention: start again from the newest event (what was missed is lost here)
        o.warn(`warning: ${err.message}; skipping to the newest event`);
        [last, seeking, listening] = [null, true, false];
        continue;
      }
      if (err instanceof ApiError && FATAL.has(err.status)) throw err;
      delay =
        err instanceof ApiError && err.status === 429 && err.retryAfterMs !== null
          ? err.retryAfterMs
          : Math.min(Math.max(delay * 2, 2_000), MAX_BACKOFF_MS);
      const why = err instanceof ApiError ? err.message : ((err as Error).message ?? String(err));
      o.warn(`warning: the events feed: ${why}; trying again in ${(delay / 1000).toFixed(1)} s`);
    }
    await pause(delay, o.signal);
  }
  return { forwarded, failed };
}
