/** What every method takes and gives, read from the types openapi-typescript generated (src/generated/). */
/** Per call: each overrides the client's setting for this call only. */
export interface RequestOptions {
  /** The write's `Idempotency-Key`; without it the SDK makes one per call and sends it on every retry of that call. */
  idempotencyKey?: string;
  /** Aborts the call, its retries and their waits. */
  signal?: AbortSignal;
  /** Milliseconds each attempt may take. */
  timeout?: number;
  /** Retries after the first attempt. */
  maxRetries?: number;
}

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** An operation's request body. */
export type BodyOf<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
/** An operation's query parameters. */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** An operation's success answer (200 or 201). */
export type OkOf<O> = O extends { responses: infer R }
  ? 200 extends keyof R
    ? JsonOf<R[200]>
    : 201 extends keyof R
      ? JsonOf<R[201]>
      : never
  : never;
/** The record type of a paginated list. */
export type ItemOf<O> = OkOf<O> extends { data: (infer I)[] } ? I : never;
