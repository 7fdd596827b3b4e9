/**
 * What a gateway surface answers inside its pipeline: a Response, or a HeldAnswer, the parts of an answer the gateway
 * already holds (the Storefront cache's representation, a forwarded call's answer, a refusal) and the headers this
 * request adds. The surface makes one Response of it at the end, for Bun.serve (docs/design/gateway.md).
 */
export class HeldAnswer {
  constructor(
    readonly status: number,
    /** The representation's own headers, shared by every answer made from it: never changed. */
    readonly own: Readonly<Record<string, string>> | KeptHeaders,
    /** This answer's headers from the gateway (request id, CORS, rate limit): where a name is in both, these win. */
    readonly extra: Readonly<Record<string, string>> | null,
    /** The body, shared too (a Blob: the Storefront cache's, not copied into each Response); null for none (a 304). */
    readonly body: Uint8Array | Blob | null,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** The same answer as a Response: its headers one object (the gateway's own win), its body the bytes held. */
  toResponse(): Response {
    const { own, extra } = this;
    return new Response(this.body as Uint8Array<ArrayBuffer> | Blob | null, {
      status: this.status,
      headers: own instanceof KeptHeaders ? own.with(extra) : extra ? { ...own, ...extra } : own,
    });
  }
}

const NO_EXTRA: Readonly<Record<string, string>> = {};

/**
 * A representation's own headers as the Storefront cache keeps them, shared by every answer made from it, with one
 * Headers object reused from one answer to the next, that answer's own set on top. A Response copies a Headers
 * object natively when it is made; given a plain object, it reads every name and value out of JavaScript, which
 * was a fifth of a cached read's CPU (docs/benchmarks.md). Only what differs from the last answer is set: the
 * request id and trace, mostly.
 */
export class KeptHeaders {
  private built: Headers | null = null;
  private last: Readonly<Record<string, string>> = NO_EXTRA;

  constructor(readonly values: Readonly<Record<string, string>>) {}

  /** These headers with `extra` on top, as one Headers object: good until the next call (a Response copies it). */
  with(extra: Readonly<Record<string, string>> | null): Headers {
    const next = extra ?? NO_EXTRA;
    const h = (this.built ??= new Headers(this.values));
    const last = this.last;
    // a name the last answer added and this one lacks goes back to this representation's value, or goes
    for (const k in last)
      if (!(k in next)) {
        const own = this.values[k];
        if (own === undefined) h.delete(k);
        else h.set(k, own);
      }
    for (const k in next) {
      const v = next[k]!;
      if (last[k] !== v) h.set(k, v);
    }
    this.last = next;
    return h;
  }
}

export type Answer = Response | HeldAnswer;

/** An answer as a Response: what Bun.serve writes. */
export const asResponse = (a: Answer): Response => (a instanceof HeldAnswer ? a.toResponse() : a);
