/**
 * What a gateway surface answers: a Response, or a HeldAnswer, an answer the edge writes from bytes the gateway
 * already holds (the Storefront's cached read) with no Response made and read back on the way (docs/design/edge.md).
 */
export class HeldAnswer {
  constructor(
    readonly status: number,
    /** The representation's own headers, shared by every answer made from it: never changed. */
    readonly own: Readonly<Record<string, string>>,
    /** This answer's headers from the gateway (request id, CORS, rate limit): where a name is in both, these win. */
    readonly extra: Readonly<Record<string, string>> | null,
    /** The body, shared too; null for none (a 304). */
    readonly body: Uint8Array | null,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** The same answer as a Response, for what reads answers as Responses (Bun.serve, a test). */
  toResponse(): Response {
    return new Response(this.body as Uint8Array<ArrayBuffer> | null, {
      status: this.status,
      headers: { ...this.own, ...this.extra }, // the gateway's own win
    });
  }
}

export type Answer = Response | HeldAnswer;

/**
 * Bytes kept free before a body made by `withHeadRoom` (a representation the Storefront cache keeps): the edge writes
 * an answer's status line and headers there, when they fit, and sends head and body from where they lie, the body
 * not copied (docs/design/edge.md).
 */
export const HEAD_ROOM = 1024;
const roomy = new WeakSet<Uint8Array>();

/** `bytes` copied behind HEAD_ROOM free bytes: the view returned is the body, the room is the edge's to write in. */
export function withHeadRoom(bytes: Uint8Array): Uint8Array {
  const whole = Buffer.allocUnsafeSlow(HEAD_ROOM + bytes.byteLength);
  whole.set(bytes, HEAD_ROOM);
  const body = whole.subarray(HEAD_ROOM);
  roomy.add(body);
  return body;
}

/** Whether `body` was made by `withHeadRoom`: the HEAD_ROOM bytes before it are free to write an answer's head in. */
export const hasHeadRoom = (body: Uint8Array): boolean => roomy.has(body);

const kept = new WeakSet<object>();

/**
 * `headers`, marked as a representation's own, kept and shared by every answer made from it (the Storefront cache's):
 * the edge writes their lines as bytes once and copies them into each answer's head. Never to be changed after.
 */
export function keptHeaders<H extends Record<string, string>>(headers: H): Readonly<H> {
  kept.add(headers);
  return headers;
}

/** Whether `headers` were marked by `keptHeaders`. */
export const isKeptHeaders = (headers: object): boolean => kept.has(headers);

/** An answer as a Response: what a port served by Bun.serve needs. */
export const asResponse = (a: Answer): Response => (a instanceof HeldAnswer ? a.toResponse() : a);
