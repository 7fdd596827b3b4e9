/**
 * Gateway -> service request signing (docs/design/gateway.md step 5, docs/design/hostile-callers.md). The gateway drops any
 * `x-gw-*` header a caller sent, then adds these, HMAC-SHA256 signed with a timestamp.
 * The signature covers the body's SHA-256 and the Idempotency-Key too, so a request
 * seen on the internal hop cannot be replayed with another body or key.
 */
export const GW = {
  studio: 'x-gw-studio',
  key: 'x-gw-key',
  scopes: 'x-gw-scopes',
  operation: 'x-gw-operation',
  timestamp: 'x-gw-timestamp',
  signature: 'x-gw-signature',
  /** Hex SHA-256 of the body; sent only with a body (absent: the hash of no bytes). */
  bodySha256: 'x-gw-body-sha256',
} as const;
export const REQUEST_ID = 'x-request-id';
export const IDEMPOTENCY_KEY = 'idempotency-key';
export const MAX_SIGNATURE_AGE_MS = 60_000;
/** SHA-256 of no bytes: the signed body hash of a request without a body. */
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Hex SHA-256 of a body (of no bytes when there is none). */
export const sha256Hex = (body: Uint8Array | string | null | undefined): string =>
  body?.length ? new Bun.CryptoHasher('sha256').update(body).digest('hex') : EMPTY_SHA256;

/** What a signature covers besides the caller: the body's bytes and the Idempotency-Key header. */
export interface SignedContent {
  body?: Uint8Array | string | null;
  idempotencyKey?: string | null;
}

export interface Caller {
  studioId: string;
  keyId: string;
  scopes: string[];
  operationId: string;
  requestId: string;
}

/** The signed string of docs/design/hostile-callers.md, lines joined by `\n`. */
const payload = (
  ts: string,
  method: string,
  pathAndQuery: string,
  c: Caller,
  scopes: string,
  bodySha256: string,
  idempotencyKey: string,
) =>
  `${ts}\n${method}\n${pathAndQuery}\n${c.studioId}\n${c.keyId}\n${scopes}\n${c.operationId}\n${c.requestId}\n${bodySha256}\n${idempotencyKey}`;

/** HMAC state keyed once per secret and copied per call: a third cheaper than keying a new hasher on every request (both ends of every hop sign or verify). */
const keyed = new Map<string, Bun.CryptoHasher>();
function mac(secret: string, data: string): string {
  let base = keyed.get(secret);
  if (!base) keyed.set(secret, (base = new Bun.CryptoHasher('sha256', secret)));
  return base.copy().update(data).digest('hex');
}

/**
 * The internal headers of a forwarded request. `content` names the body and Idempotency-Key
 * the request is sent with; the key's header itself travels as the caller sent it.
 */
export function signedHeaders(
  secret: string,
  method: string,
  pathAndQuery: string,
  c: Caller,
  now = Date.now(),
  content: SignedContent = {},
): Record<string, string> {
  const ts = String(now);
  const bodySha256 = sha256Hex(content.body);
  const scopes = c.scopes.join(',');
  const headers: Record<string, string> = {
    [GW.studio]: c.studioId,
    [GW.key]: c.keyId,
    [GW.scopes]: scopes,
    [GW.operation]: c.operationId,
    [GW.timestamp]: ts,
    [GW.signature]: mac(secret, payload(ts, method, pathAndQuery, c, scopes, bodySha256, content.idempotencyKey ?? '')),
    [REQUEST_ID]: c.requestId,
  };
  if (bodySha256 !== EMPTY_SHA256) headers[GW.bodySha256] = bodySha256;
  return headers;
}

/**
 * The caller a valid signature vouches for, or null when missing, wrong or older than 60 s.
 * It vouches for the body hash in `x-gw-body-sha256` (the service checks the bytes it reads
 * against it: `readSignedBody`) and for the Idempotency-Key header as received.
 */
export function verifySignature(
  secret: string,
  method: string,
  pathAndQuery: string,
  h: Headers,
  now = Date.now(),
): Caller | null {
  const sig = h.get(GW.signature);
  const ts = h.get(GW.timestamp);
  if (!sig || !ts || !/^\d{1,16}$/.test(ts)) return null;
  const age = now - Number(ts);
  if (age > MAX_SIGNATURE_AGE_MS || age < -5_000) return null;
  const c: Caller = {
    studioId: h.get(GW.studio) ?? '',
    keyId: h.get(GW.key) ?? '',
    scopes: (h.get(GW.scopes) ?? '').split(',').filter(Boolean),
    operationId: h.get(GW.operation) ?? '',
    requestId: h.get(REQUEST_ID) ?? '',
  };
  const bodySha256 = h.get(GW.bodySha256) ?? EMPTY_SHA256;
  const expected = Buffer.from(
    mac(secret, payload(ts, method, pathAndQuery, c, c.scopes.join(','), bodySha256, h.get(IDEMPOTENCY_KEY) ?? '')),
  );
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
  return c;
}
