/** One call as the activity log keeps it (the writer buffers these; the COPY encoder writes them). */
export interface ActivityEntry {
  studioId: string;
  keyId: string;
  operationId: string | null;
  method: string;
  path: string;
  status: number;
  outcome: 'success' | 'client_error' | 'server_error';
  durationMs: number;
  requestId: string;
  /** When the request arrived, in ms since the epoch (the time in its request id). */
  at: number;
  /** The problem code of a refused or failed call. */
  problemCode?: string | null;
  /** W3C trace id of the call (docs/design/observability.md). */
  traceId?: string | null;
  /** The query string, without its `?`. */
  query?: string | null;
  /** The problem's detail, when it says more than its code's title. */
  problemDetail?: string | null;
  /** The caller's address (behind trusted proxies, the rightmost X-Forwarded-For entry that is not one: `clientAddressOf`). */
  clientAddress?: string | null;
  userAgent?: string | null;
  /** A folded 429 (`status` 429): how many calls of this key and address were refused in its second. */
  refusedCount?: number | null;
}
