/**
 * A request body on the edge: the bytes llhttp hands over, kept as they come, held to the limit `readBody`
 * (shared/src/body.ts) holds a Request's body to. Read by the forward step (`read`), which waits for it whole.
 */
import type { AppError } from '@studio/shared';
import { bodyTimedOut, tooLarge } from '@studio/shared/body';

/** The client went away before its body was whole: the forward step answers 499 `client_closed_request`. */
export class BodyAbandoned extends Error {}

export class EdgeBody {
  /** The body so far: one buffer of the declared length, or the chunks as they came (chunked framing). */
  private readonly whole: Uint8Array | null;
  private readonly parts: Uint8Array[] = [];
  private size = 0;
  /** Why the body will never be whole: over the limit, too slow, or the client gone. */
  failure: AppError | BodyAbandoned | null = null;
  done = false;
  private waiting: (() => void)[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  /** `declared`: the Content-Length (null when chunked); past `limit`, the body is refused before a byte is kept. */
  constructor(
    declared: number | null,
    private readonly limit: number,
  ) {
    if (declared !== null && declared > limit) this.failure = tooLarge();
    this.whole = declared !== null && !this.failure ? new Uint8Array(declared) : null;
  }

  /** Whether nothing more will come: whole, or failed. */
  get settled(): boolean {
    return this.done || this.failure !== null;
  }

  push(chunk: Uint8Array) {
    if (this.settled) return;
    if (this.size + chunk.byteLength > this.limit) return this.fail(tooLarge());
    if (this.whole) this.whole.set(chunk, this.size);
    else this.parts.push(Buffer.from(chunk)); // the parser's buffer is not ours to keep
    this.size += chunk.byteLength;
  }

  end() {
    if (this.settled) return;
    this.done = true;
    this.wake();
  }

  fail(why: AppError | BodyAbandoned) {
    if (this.settled) return;
    this.failure = why;
    this.wake();
  }

  /** Resolves once nothing more will come (whole or failed). */
  whenSettled(): Promise<void> {
    return this.settled ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * The whole body, once it has come; 413 past the limit, 408 `request_timeout` once it has taken `deadlineMs` from
   * this call (as `readBody`), `BodyAbandoned` when the client leaves first.
   */
  async read(deadlineMs: number): Promise<Uint8Array> {
    if (!this.settled && !this.timer) this.timer = setTimeout(() => this.fail(bodyTimedOut(deadlineMs)), deadlineMs);
    await this.whenSettled();
    if (this.failure) throw this.failure;
    return this.bytes();
  }

  private bytes(): Uint8Array {
    if (this.whole) return this.whole;
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
  }

  private wake() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const w of this.waiting) w();
    this.waiting = [];
  }
}
