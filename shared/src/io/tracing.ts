/**
 * Spans with the OpenTelemetry JS SDK (docs/design/observability.md), one SERVER span per request per process,
 * exported by OTLP/HTTP (JSON) in batches off the request path. The SDK reads its standard variables itself
 * (OTEL_EXPORTER_OTLP_ENDPOINT and _HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and
 * _ARG, OTEL_BSP_*): the one exception to the typed configuration, which only validates the endpoint and turns
 * tracing on with it. Without an endpoint `createTracing` returns null and nothing of the SDK is built: a request
 * then gets `startTrace`'s plain ids and no span object.
 *
 * No context manager and no global provider: a span is this hop's and travels on its `Trace`, and each app built in
 * a process has its own provider (its own service name).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { redactKeys } from '../apikey';
import { log } from '../http';
import { parseTraceparent, type Trace } from '../trace';

/** How long a stopping process waits for its last spans to go out (its drain has 10 s, compose's grace 15 s). */
const FLUSH_MS = 3_000;
/** A text attribute keeps 512 characters at most (a path is the caller's to make long), as an access line does. */
const TEXT_MAX = 512;

export interface RequestSpan {
  method: string;
  path: string;
  status: number;
  operation: string;
  surface?: string;
}

export interface Tracing {
  /** `startTrace`, with the SDK's span: its ids, and the sampler's decision in bit 0 of the flags. */
  start(traceparent: string | null, start?: number): Trace;
  /** Ends a request's span, named by method and operation, with the path (a key pasted into it redacted). */
  end(t: Trace, r: RequestSpan): void;
  /** Sends what is queued and stops, for `withinMs` at most: a collector that does not answer must not hold a stopping process past its grace. */
  shutdown(withinMs?: number): Promise<void>;
}

/** A failed export is said on the log (the SDK would tell only its global error handler). */
function logFailures(inner: SpanExporter): SpanExporter {
  return {
    export(spans, done) {
      inner.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) {
          const e = result.error as { code?: unknown; message?: string } | undefined;
          const error = typeof e?.code === 'number' ? `the collector answered ${e.code}` : String(e?.message ?? e);
          log('warn', 'span export failed', { error, dropped: spans.length });
        }
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

const hexByte = (n: number) => (n < 16 ? `0${n.toString(16)}` : n.toString(16));

/** This hop's span: a child of the caller's (a valid `traceparent`), else a new trace's root. */
function startSpan(tracer: Tracer, traceparent: string | null, start = Date.now()): Trace {
  const incoming = parseTraceparent(traceparent);
  const inFlags = incoming ? Number.parseInt(incoming.flags, 16) : 0;
  const parent = incoming
    ? trace.setSpanContext(ROOT_CONTEXT, {
        traceId: incoming.traceId,
        spanId: incoming.parentId,
        traceFlags: inFlags,
        isRemote: true,
      })
    : ROOT_CONTEXT;
  const span = tracer.startSpan('request', { kind: SpanKind.SERVER, startTime: start }, parent);
  const { traceId, spanId, traceFlags } = span.spanContext();
  // the caller's other flag bits (W3C's random-trace-id bit) kept; the sampled bit is the sampler's
  const flags = hexByte((inFlags & ~1) | (traceFlags & 1));
  return { traceId, spanId, parentId: incoming?.parentId ?? null, flags, start, span };
}

function endSpan(t: Trace, r: RequestSpan): void {
  const span = t.span;
  if (!span?.isRecording()) return;
  span.updateName(`${r.method} ${r.operation}`);
  span.setAttributes({
    'http.request.method': r.method,
    'url.path': redactKeys(r.path).slice(0, TEXT_MAX),
    ...(r.surface ? { 'studio.surface': r.surface } : {}),
    'studio.operation': r.operation,
    'http.response.status_code': r.status,
  });
  if (r.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** `provider.shutdown()` (the last batches sent), waited for `withinMs` at most. */
async function shutdownWithin(provider: BasicTracerProvider, withinMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, withinMs, 'late')));
  // a failed export was logged by logFailures; the rejection it makes here says nothing more
  const done = provider.shutdown().then(
    () => 'done' as const,
    () => 'done' as const,
  );
  const outcome = await Promise.race([done, late]).finally(() => clearTimeout(timer));
  if (outcome === 'late') log('warn', 'span export failed', { error: `not sent within ${withinMs} ms of stopping` });
}

export function createTracing(endpoint: string, serviceName: string): Tracing | null {
  if (!endpoint) return null;
  // ours, then the environment's (OTEL_RESOURCE_ATTRIBUTES; OTEL_SERVICE_NAME over our name)
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(logFailures(new OTLPTraceExporter()))],
  });
  const tracer = provider.getTracer('@studio/shared');
  return {
    start: (traceparent, start) => startSpan(tracer, traceparent, start),
    end: endSpan,
    shutdown: (withinMs = FLUSH_MS) => shutdownWithin(provider, withinMs),
  };
}
