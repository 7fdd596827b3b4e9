/**
 * One webhook attempt (docs/design/webhooks.md): check the URL and the addresses its host resolves to, then
 * POST the event to the address that was checked (the Host header and the TLS server name keep the
 * URL's host, so the certificate is still verified against it), signed per Standard Webhooks, with
 * a time limit, no redirects followed and no proxy taken from the environment.
 */

import { isIP } from 'node:net';
import { checkTarget, parseWebhookUrl, type Resolver, signatureHeader, urlForAddress } from '@studio/shared/webhooks';

export const RESPONSE_KEPT_BYTES = 1024;
const USER_AGENT = 'StudioAPI-Webhooks/1.0 (+https://www.standardwebhooks.com/)';

export interface AttemptResult {
  /** A 2xx within the time limit. */
  ok: boolean;
  /** 410 Gone: the receiver asks never to be called again. */
  gone: boolean;
  statusCode: number | null;
  durationMs: number;
  /** The first 1 KB of the answer's body. */
  response: string | null;
  error: string | null;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  resolve?: Resolver;
}

/** At most `max` bytes of UTF-8, cut on a character boundary, without NUL (which Postgres text refuses). */
export function firstBytes(text: string, max = RESPONSE_KEPT_BYTES): string {
  const clean = text.replaceAll('\u0000', '');
  const bytes = Buffer.from(clean, 'utf8');
  if (bytes.length <= max) return clean;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back to the start of the cut character
  return bytes.subarray(0, end).toString('utf8');
}

/** Reads at most `max` bytes of the body, then stops (a receiver cannot make us read more). */
async function readHead(res: Response, max = RESPONSE_KEPT_BYTES): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  // decoding up to 4 bytes more than kept lets firstBytes cut on a character boundary
  return firstBytes(new TextDecoder().decode(Buffer.concat(chunks).subarray(0, max + 4)), max);
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  const message = e?.message ?? String(err);
  // Bun's messages often begin with their code already ("ECONNREFUSED: Unable to connect…")
  const text = e?.code && !message.startsWith(e.code) ? `${e.code}: ${message}` : message;
  return text.replace(/ For more information, pass `verbose: true`.*$/, '').slice(0, 500);
}

export async function sendWebhook(
  d: { url: string; eventId: string; body: string; secrets: readonly Uint8Array[] },
  o: SendOptions,
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refused = (error: string): AttemptResult => ({
    ok: false,
    gone: false,
    statusCode: null,
    durationMs: elapsed(),
    response: null,
    error,
  });
  const parsed = parseWebhookUrl(d.url, o.allowPrivate);
  if ('error' in parsed) return refused(`not sent: ${parsed.error}`);
  const signal = AbortSignal.timeout(o.timeoutMs);
  // the check and the connection use the same address: resolved once, here
  const target = await Promise.race([
    checkTarget(parsed.url, o.allowPrivate, o.resolve),
    new Promise<{ error: string }>((resolve) =>
      signal.addEventListener('abort', () =>
        resolve({ error: `${parsed.url.hostname} did not resolve within ${o.timeoutMs / 1000} s` }),
      ),
    ),
  ]);
  if ('error' in target) return refused(`not sent: ${target.error}`);
  const timestamp = Math.floor(Date.now() / 1000);
  const host = parsed.url.hostname;
  try {
    const res = await fetch(urlForAddress(target), {
      method: 'POST',
      headers: {
        host: parsed.url.host,
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': d.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(d.secrets, d.eventId, timestamp, d.body),
      },
      body: d.body,
      redirect: 'manual',
      signal,
      // Bun takes HTTP(S)_PROXY from the environment unless told `false` (an empty string is not enough)
      proxy: false as unknown as string,
      ...(parsed.url.protocol === 'https:' && !isIP(host.replace(/^\[|\]$/g, '')) ? { tls: { serverName: host } } : {}),
    });
    // the status decides; a body that trickles past the time limit is not kept (the attempt shows no answer text)
    const response = await readHead(res).catch(() => null);
    const ok = res.status >= 200 && res.status < 300;
    const error = res.status >= 300 && res.status < 400 ? 'redirects are not followed' : null;
    return { ok, gone: res.status === 410, statusCode: res.status, durationMs: elapsed(), response, error };
  } catch (err) {
    return refused(describe(err, o.timeoutMs));
  }
}
