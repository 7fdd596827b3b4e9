/**
 * Gateway -> service request signing (contract §3 step 5). The gateway drops any
 * `x-gw-*` header a caller sent, then adds these, HMAC-SHA256 signed with a timestamp.
 */
export const GW = {
  studio: 'x-gw-studio',
  key: 'x-gw-key',
  scopes: 'x-gw-scopes',
  operation: 'x-gw-operation',
  timestamp: 'x-gw-timestamp',
  signature: 'x-gw-signature',
} as const;
export const REQUEST_ID = 'x-request-id';
export const MAX_SIGNATURE_AGE_MS = 60_000;

export interface Caller {
  studioId: string;
  keyId: string;
  scopes: string[];
  operationId: string;
  requestId: string;
}

const payload = (ts: string, method: string, pathAndQuery: string, c: Caller) =>
  `${ts}\n${method}\n${pathAndQuery}\n${c.studioId}\n${c.keyId}\n${c.scopes.join(',')}\n${c.operationId}\n${c.requestId}`;

/** HMAC state keyed once per secret and copied per call: a third cheaper than keying a new hasher on every request (both ends of every hop sign or verify). */
const keyed = new Map<string, Bun.CryptoHasher>();
function mac(secret: string, data: string): string {
  let base = keyed.get(secret);
  if (!base) keyed.set(secret, (base = new Bun.CryptoHasher('sha256', secret)));
  return base.copy().update(data).digest('hex');
}

export function signedHeaders(secret: string, method: string, pathAndQuery: string, c: Caller, now = Date.now()): Record<string, string> {
  const ts = String(now);
  return {
    [GW.studio]: c.studioId,
    [GW.key]: c.keyId,
    [GW.scopes]: c.scopes.join(','),
    [GW.operation]: c.operationId,
    [GW.timestamp]: ts,
    [GW.signature]: mac(secret, payload(ts, method, pathAndQuery, c)),
    [REQUEST_ID]: c.requestId,
  };
}

/** The caller a valid signature vouches for, or null when missing, wrong or older than 60 s. */
export function verifySignature(secret: string, method: string, pathAndQuery: string, h: Headers, now = Date.now()): Caller | null {
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
  const expected = Buffer.from(mac(secret, payload(ts, method, pathAndQuery, c)));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
  return c;
}
