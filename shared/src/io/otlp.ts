/**
 * Spans exported by OTLP/HTTP (JSON encoding) when `OTEL_EXPORTER_OTLP_ENDPOINT` is set;
 * otherwise `createSpanExporter` returns null and nothing is recorded. Spans wait in a
 * bounded queue and go out in batches (every second, or at 512), never on a request's
 * path; when the collector is away the oldest are dropped.
 *
 * Why not the OpenTelemetry SDK: the gateway answers cached reads in about 20 µs, and
 * the SDK's span objects, context manager and processors cost a measurable part of
 * that; a server span per request needs only these few fields.
 */

import { redactKeys } from '../apikey';
import { JSON_TYPE, log } from '../http';
import { isSampled, type Trace } from '../trace';

export interface SpanEnd {
  name: string;
  attributes: Record<string, string | number>;
  /** HTTP status of the answer; 5xx marks the span as an error. */
  status: number;
}

const BATCH = 512;
const MAX_QUEUE = 8_192;
const EVERY_MS = 1_000;
/** How long a stopping process waits for its last spans to go out (its drain has 10 s, compose's grace 15 s). */
const FLUSH_MS = 3_000;

/** A text attribute keeps 512 characters at most (a path is the caller's to make long), as an access line does. */
const attribute = (key: string, v: string | number) =>
  typeof v === 'number'
    ? { key, value: { intValue: String(v) } }
    : { key, value: { stringValue: v.length > 512 ? v.slice(0, 512) : v } };

/** One server span in OTLP/JSON, ended now. */
const spanOf = (t: Trace, s: SpanEnd) => ({
  traceId: t.traceId,
  spanId: t.spanId,
  ...(t.parentId ? { parentSpanId: t.parentId } : {}),
  name: s.name,
  kind: 2, // SERVER
  startTimeUnixNano: `${t.start}000000`,
  endTimeUnixNano: `${Date.now()}000000`,
  attributes: [
    ...Object.entries(s.attributes).map(([k, v]) => attribute(k, v)),
    attribute('http.response.status_code', s.status),
  ],
  status: { code: s.status >= 500 ? 2 : 0 },
});

/** One batch to the collector; a failure (away, too slow, or refusing it: 404 at a wrong path, 413, 503) is logged. */
function post(url: string, serviceName: string, spans: object[]): Promise<void> {
  const body = {
    resourceSpans: [
      {
        resource: { attributes: [attribute('service.name', serviceName)] },
        scopeSpans: [{ scope: { name: '@studio/shared/io/otlp' }, spans }],
      },
    ],
  };
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': JSON_TYPE },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  })
    .then(async (res) => {
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`the collector answered ${res.status}`);
    })
    .catch((err) => log('warn', 'span export failed', { error: String(err), dropped: spans.length }));
}

interface RequestSpan {
  method: string;
  path: string;
  status: number;
  operation: string;
  surface?: string;
}

/** Named by method and operation, with the path (a key pasted into it redacted) and, when given, the surface. */
const requestSpan = (r: RequestSpan): SpanEnd => ({
  name: `${r.method} ${r.operation}`,
  status: r.status,
  attributes: {
    'http.request.method': r.method,
    'url.path': redactKeys(r.path),
    ...(r.surface ? { 'studio.surface': r.surface } : {}),
    'studio.operation': r.operation,
  },
});

export function createSpanExporter(endpoint: string, serviceName: string) {
  if (!endpoint) return null;
  const url = `${endpoint.replace(/\/$/, '')}/v1/traces`;
  const queue: object[] = [];
  let sending: Promise<void> | null = null;
  /** Spans of the batch being sent. */
  let inFlight = 0;

  async function send() {
    if (!queue.length || sending) return;
    const spans = queue.splice(0, BATCH);
    inFlight = spans.length;
    sending = post(url, serviceName, spans).finally(() => {
      sending = null;
      inFlight = 0;
    });
    await sending;
  }
  const timer = setInterval(() => void send(), EVERY_MS);
  timer.unref?.();

  return {
    /** The span of one request, ended now. */
    end(t: Trace, s: SpanEnd) {
      if (queue.length >= MAX_QUEUE) queue.shift();
      queue.push(spanOf(t, s));
      if (queue.length >= BATCH) void send();
    },
    /** A server's span of one HTTP request, when its trace is sampled (`requestSpan`): how every process ends its requests'. */
    request(t: Trace, r: RequestSpan) {
      if (isSampled(t)) this.end(t, requestSpan(r));
    },
    /**
     * Sends what is queued (at shutdown, and in tests), for `withinMs` at most: a collector that does not answer must
     * not hold a stopping process past its grace period (its last access lines are written after this). What is
     * still queued then is dropped, and said.
     */
    async flush(withinMs = FLUSH_MS) {
      const deadline = Date.now() + withinMs;
      const step = async () => {
        await sending;
        await send();
      };
      while ((queue.length || sending) && Date.now() < deadline) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadline - Date.now())));
        await Promise.race([step(), late]).finally(() => clearTimeout(timer));
      }
      if (queue.length || sending) {
        const dropped = queue.length + inFlight;
        log('warn', 'span export failed', { error: `not sent within ${withinMs} ms of stopping`, dropped });
        queue.length = 0;
      }
    },
    close() {
      clearInterval(timer);
    },
  };
}
export type SpanExporter = NonNullable<ReturnType<typeof createSpanExporter>>;
