/**
 * Request bodies are bounded before anything else looks at them (docs/design/errors.md): at most
 * 1 MiB, whichever process reads them and however they are framed (a declared length or
 * chunks), and JSON nested at most 32 deep, checked by a linear scan before `JSON.parse`
 * or a validator can spend time on it.
 */
import { AppError } from './problem';
import { EMPTY_SHA256, GW, sha256Hex } from './signing';
import { withDeadline } from './time';

export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_JSON_DEPTH = 32;
/**
 * Bun's own cap (`maxRequestBodySize`), far above ours: Bun answers a bare 413 with no body
 * over it, so the limit that callers meet is ours, with a problem body.
 */
export const BUN_BODY_CAP = 1024 * 1024 * 1024;

export const tooLarge = () =>
  new AppError('payload_too_large', { detail: `Request bodies are limited to ${MAX_BODY_BYTES / 1024 / 1024} MiB.` });

/**
 * 408 `request_timeout`: the body did not arrive whole within `ms` of the start of its read (a trickle of bytes keeps
 * an idle timeout from ever firing). The answer closes the connection, so what is left of the body is never read.
 */
export const bodyTimedOut = (ms: number) =>
  new AppError('request_timeout', {
    detail: `The request body did not arrive in full within ${ms / 1000} s.`,
    headers: { connection: 'close' },
  });

/**
 * The whole body, or 413 as soon as it grows past the limit (nothing more is read). With `deadlineMs`, 408 once the
 * body has taken that long (`bodyTimedOut`): a caller that sends a byte now and then holds a read for that long at
 * most, not for as long as it keeps sending.
 */
export function readBody(request: Request, limit = MAX_BODY_BYTES, deadlineMs = 0): Promise<Uint8Array<ArrayBuffer>> {
  if (!deadlineMs) return readWhole(request, limit, null);
  const stop: { expired: AppError | null } = { expired: null };
  // the read left behind ends with the connection the 408 closes: the race has taken its rejection
  return withDeadline(readWhole(request, limit, stop), deadlineMs, () => (stop.expired = bodyTimedOut(deadlineMs)));
}

async function readWhole(
  request: Request,
  limit: number,
  stop: { expired: AppError | null } | null,
): Promise<Uint8Array<ArrayBuffer>> {
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (Number(declared) > limit) throw tooLarge();
    return new Uint8Array(await request.arrayBuffer()); // the server holds a body to its declared length
  }
  if (!request.body) return new Uint8Array(0);
  // chunked: counted as it arrives, and no more is read once past the limit or the deadline
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.byteLength;
    if (size > limit) {
      void reader.cancel();
      throw tooLarge();
    }
    if (stop?.expired) {
      void reader.cancel();
      throw stop.expired;
    }
    chunks.push(r.value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/** The depth of the deepest array or object in JSON text (strings skipped), stopping once past `max`. */
export function jsonDepth(text: string, max = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // skip the string, escapes included
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest && (deepest = depth) > max) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * A service's request body: read bounded, and refused (401 `gateway_signature_invalid`)
 * unless it is the one whose SHA-256 the gateway signed (`x-gw-body-sha256`; none: no
 * bytes). The service kit verified the signature over that header before any route ran.
 */
export async function readSignedBody(request: Request): Promise<Uint8Array<ArrayBuffer>> {
  const body = await readBody(request);
  if (sha256Hex(body) !== (request.headers.get(GW.bodySha256) ?? EMPTY_SHA256)) {
    throw new AppError('gateway_signature_invalid', { detail: 'The request body is not the one the gateway signed.' });
  }
  return body;
}

/** A service's JSON body: signed (`readSignedBody`), bounded in size and depth, then parsed; 401, 413 or 400 `malformed_json` otherwise. */
export const readSignedJson = async (request: Request): Promise<unknown> => parseJson(await readSignedBody(request));

/** JSON is UTF-8 (RFC 8259): bytes that are not are refused, never stored as U+FFFD in their place. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** JSON text bounded in depth, then parsed; 400 `malformed_json` otherwise. */
function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new AppError('malformed_json', { detail: 'The request body is not UTF-8 text; JSON must be.' });
  }
  if (!text.trim()) throw new AppError('malformed_json', { detail: 'The request body is empty; send a JSON object.' });
  if (jsonDepth(text) > MAX_JSON_DEPTH)
    throw new AppError('malformed_json', { detail: `JSON may be nested at most ${MAX_JSON_DEPTH} levels deep.` });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('malformed_json', { detail: 'The request body is not valid JSON.' });
  }
  // an escaped surrogate (\ud800 to \udfff) may stand alone, which UTF-8 cannot carry: Postgres would store U+FFFD
  // in its place, or refuse it in a JSON column; the strings are walked only when the text has such an escape
  if (SURROGATE_ESCAPE.test(text) && !wellFormed(value))
    throw new AppError('malformed_json', {
      detail:
        'A string in the request body holds an unpaired surrogate escape (\\ud800 to \\udfff); text must be well-formed Unicode.',
    });
  return value;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Every string of a parsed JSON value, keys included, is well-formed Unicode (no lone surrogate). */
function wellFormed(v: unknown): boolean {
  if (typeof v === 'string') return v.isWellFormed();
  if (Array.isArray(v)) return v.every(wellFormed);
  if (v && typeof v === 'object') return Object.entries(v).every(([k, x]) => k.isWellFormed() && wellFormed(x));
  return true;
}
