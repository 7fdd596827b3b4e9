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

/** An answer as a Response: what a port served by Bun.serve needs. */
export const asResponse = (a: Answer): Response => (a instanceof HeldAnswer ? a.toResponse() : a);
