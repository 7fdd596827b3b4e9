/**
 * What a gateway surface answers inside its pipeline: a Response, or a HeldAnswer, the parts of an answer the gateway
 * already holds (the Storefront cache's representation, a forwarded call's answer, a refusal) and the headers this
 * request adds. The surface makes one Response of it at the end, for Bun.serve (docs/design/gateway.md).
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

  /** The same answer as a Response: its headers one object (the gateway's own win), its body the bytes held. */
  toResponse(): Response {
    return new Response(this.body as Uint8Array<ArrayBuffer> | null, {
      status: this.status,
      headers: this.extra ? { ...this.own, ...this.extra } : this.own,
    });
  }
}

export type Answer = Response | HeldAnswer;

/** An answer as a Response: what Bun.serve writes. */
export const asResponse = (a: Answer): Response => (a instanceof HeldAnswer ? a.toResponse() : a);
