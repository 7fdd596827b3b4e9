import { accessLogOn, logRequest, REQUEST_ID, redactKeys, TRACERESPONSE, traceparentOf } from '@studio/shared';
import type { Metrics, Tracing } from '@studio/shared/io';
import { type ActivityWriter, outcomeOf } from '../activity/writer';
import type { Answer } from '../answer';
import { type Ctx, clientAddressOf, setHeaders } from './context';
import type { SurfaceProfile } from './profile';

/** Headers that let a browser page read a Storefront answer (docs/design/gateway.md). */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, ETag, Location, Idempotent-Replayed, traceresponse',
};

export interface RecordDeps {
  activity: ActivityWriter;
  metrics?: Metrics;
  /** Null unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing?: Tracing | null;
  /** TRUSTED_PROXIES (`trustedProxySet`): whose X-Forwarded-For names the caller's address. */
  trusted?: ReadonlySet<string>;
  /** Counts a test key's call (`studio_test_mode_requests_total`); a live call costs nothing more. */
  testModeCount?: (labels: { surface: string }) => void;
}

/** What an entry keeps of a path, a query, a caller's address (a trusted proxy's X-Forwarded-For hop is the caller's to write), user agent or problem detail, at most. */
export const ENTRY_TEXT_MAX = 512;

/**
 * Step 7, last: every answer gets the surface's headers (request id, `traceresponse`,
 * CORS on the Storefront, the rate-limit fields once known) and is counted, logged
 * (one JSON access line) and, when tracing exports, ends the gateway's span. Every
 * call whose key resolved to a studio leaves an activity entry, whatever its outcome,
 * encoded now and written in batches off the request path (ActivityWriter).
 */
export function recordStep(
  p: SurfaceProfile,
  { activity, metrics, tracing, trusted = new Set(), testModeCount }: RecordDeps,
) {
  const testLabels = { surface: p.surface };
  const answerHeaders = answerHeadersOf(p);

  function record<A extends Answer>(c: Ctx, res: A, headersBuiltIn = false): A {
    const key = c.key;
    const status = res.status;
    const durationMs = Math.round((performance.now() - c.started) * 100) / 100;
    const operation = c.op?.id;
    // once for the access line and the activity entry alike
    const path = redactKeys(c.path);
    if (key) {
      recordEntry(activity, trusted, c, path, status, durationMs);
      if (key.mode === 'test') testModeCount?.(testLabels);
    }
    metrics?.request(p.surface, operation, status, durationMs / 1000);
    if (accessLogOn(status))
      logRequest({
        requestId: c.requestId,
        traceId: c.trace.traceId,
        surface: p.surface,
        operation: operation ?? 'unknown',
        method: c.method,
        path,
        status,
        durationMs,
        keyId: key?.id ?? null,
        problem: c.problem,
        mode: key?.mode,
        ownIds: true, // newCtx made both
      });
    tracing?.end(c.trace, {
      method: c.method,
      path: c.path,
      status,
      operation: operation ?? 'unknown',
      surface: p.surface,
    });
    return headersBuiltIn ? res : setHeaders(res, answerHeaders(c));
  }
  return { record, answerHeaders };
}

/** The surface's answer headers (`answerHeaders`): made once a surface. */
function answerHeadersOf(p: SurfaceProfile) {
  /** The headers of this request's answer: the only place they are added, to forwarded and cached answers alike. */
  function answerHeaders(c: Ctx): Record<string, string> {
    // one object, assigned in place: this runs on every cached read
    // nosniff on every answer, cached ones included (docs/design/hostile-callers.md)
    const h: Record<string, string> = {
      [REQUEST_ID]: c.requestId,
      [TRACERESPONSE]: traceparentOf(c.trace),
      'x-content-type-options': 'nosniff',
    };
    if (p.cors) {
      h['access-control-allow-origin'] = CORS_HEADERS['access-control-allow-origin'];
      h['access-control-expose-headers'] = CORS_HEADERS['access-control-expose-headers'];
      // a key held to its sites names the one allowed origin, not any (Storefront answers vary by Origin)
      if (c.key?.allowedOrigins && !c.problem) {
        const origin = c.req.headers.get('origin');
        if (origin) h['access-control-allow-origin'] = origin;
      }
    }
    const limit = c.limitHeaders;
    if (limit) for (const k in limit) h[k] = limit[k]!;
    return h;
  }
  return answerHeaders;
}

/** The call's activity entry: every text it keeps is cut at ENTRY_TEXT_MAX (docs/design/hostile-callers.md). */
function recordEntry(
  activity: ActivityWriter,
  trusted: ReadonlySet<string>,
  c: Ctx,
  path: string,
  status: number,
  durationMs: number,
): void {
  const key = c.key!;
  const operation = c.op?.id;
  const q = c.pathAndQuery.indexOf('?');
  activity.record({
    studioId: key.studioId,
    keyId: key.id,
    operationId: operation ?? null,
    method: c.method,
    path: path.slice(0, ENTRY_TEXT_MAX),
    status,
    outcome: outcomeOf(status),
    durationMs,
    requestId: c.requestId,
    at: c.at,
    problemCode: c.problem ?? null,
    traceId: c.trace.traceId,
    query: q < 0 ? null : redactKeys(c.pathAndQuery.slice(q + 1)).slice(0, ENTRY_TEXT_MAX),
    problemDetail: c.problemDetail === undefined ? null : redactKeys(c.problemDetail).slice(0, ENTRY_TEXT_MAX),
    clientAddress: clientAddressOf(c, trusted).slice(0, ENTRY_TEXT_MAX),
    userAgent: c.req.headers.get('user-agent')?.slice(0, ENTRY_TEXT_MAX) ?? null,
  });
}
