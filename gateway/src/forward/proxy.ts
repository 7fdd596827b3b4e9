import { GW, REQUEST_ID, signedHeaders, type Caller } from '@studio/shared';
import { readBody } from '@studio/shared/body';

/** Hop-by-hop and caller-controlled headers that never cross the gateway. */
const DROP_REQUEST = new Set(['authorization', 'connection', 'keep-alive', 'host', 'transfer-encoding', 'te', 'upgrade', 'proxy-connection', REQUEST_ID]);
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'server']);

export class UpstreamError extends Error {
  constructor(readonly kind: 'unavailable' | 'timeout') {
    super(kind);
  }
}

export interface ForwardOptions {
  upstream: string;
  secret: string;
  timeoutMs: number;
}

/**
 * Forward to a service: caller-sent internal headers dropped first, the signed
 * ones added, keep-alive (Bun's fetch pools connections), a hard timeout.
 */
export async function forward(req: Request, pathAndQuery: string, caller: Caller, o: ForwardOptions): Promise<Response> {
  const headers = new Headers();
  req.headers.forEach((v, k) => {
    if (!DROP_REQUEST.has(k) && !k.startsWith('x-gw-')) headers.set(k, v);
  });
  const signed = signedHeaders(o.secret, req.method, pathAndQuery, caller);
  for (const k in signed) headers.set(k, signed[k]!);
  // read bounded, so a chunked body cannot pass the 1 MiB limit a declared length is held to (413 with a problem body)
  const requestBody = req.method !== 'GET' && req.method !== 'HEAD' ? await readBody(req) : undefined;
  let res: Response;
  try {
    res = await fetch(o.upstream + pathAndQuery, {
      method: req.method,
      headers,
      body: requestBody,
      redirect: 'manual',
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    const name = (err as Error)?.name;
    throw new UpstreamError(name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'unavailable');
  }
  const out = new Headers();
  res.headers.forEach((v, k) => {
    if (!DROP_RESPONSE.has(k) && !k.startsWith('x-gw-')) out.set(k, v);
  });
  // buffer the body so a service that stalls mid-body still hits the timeout, and the length is exact
  let body: ArrayBuffer;
  try {
    body = await res.arrayBuffer();
  } catch (err) {
    throw new UpstreamError((err as Error)?.name === 'TimeoutError' ? 'timeout' : 'unavailable');
  }
  return new Response(req.method === 'HEAD' ? null : body, { status: res.status, headers: out });
}

export { GW };
