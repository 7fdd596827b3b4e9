/**
 * Span export as production runs it (docs/design/observability.md): the three processes from their `main.ts`, the
 * OpenTelemetry SDK configured only by its standard variables, and an OTLP/HTTP receiver here that answers 401 unless
 * it gets the Authorization header that only OTEL_EXPORTER_OTLP_HEADERS gives. The SDK's batch delay is left at its
 * 5 s and the processes are stopped (SIGTERM) right after the requests: what arrives was sent by the drain's flush.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { randomBase62, SCOPES } from '@studio/shared';
import { type Stack, startStack } from './harness';
import { spawnStack } from './spawned-stack';

type Attribute = { key: string; value: { stringValue?: string; intValue?: number | string } };
type Span = { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes: Attribute[] };
type Export = { resourceSpans: { resource: { attributes: Attribute[] }; scopeSpans: { spans: Span[] }[] }[] };

/** A receiver on 127.0.0.1 that keeps the batches sent with `authorization` and counts the others (answered 401). */
function receiver(authorization: string) {
  const batches: Export[] = [];
  const refused = { count: 0 };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      if (new URL(req.url).pathname !== '/v1/traces') return new Response('not here', { status: 404 });
      if (req.headers.get('authorization') !== authorization) {
        refused.count++;
        return new Response('unauthorized', { status: 401 });
      }
      batches.push((await req.json()) as Export);
      return Response.json({});
    },
  });
  /** Each span received, with its resource's attributes as a record. */
  const spans = () =>
    batches.flatMap((b) =>
      b.resourceSpans.flatMap((rs) => {
        const resource = Object.fromEntries(rs.resource.attributes.map((a) => [a.key, a.value.stringValue]));
        return rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ ...span, resource })));
      }),
    );
  return { server, batches, refused, spans, endpoint: `http://127.0.0.1:${server.port}` };
}

const attribute = (span: Span, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

let s: Stack;
let key: string;
beforeAll(async () => {
  s = await startStack();
  const studioId = (await s.studio()).id;
  key = (await s.key(studioId, 'secret', SCOPES)).key;
});
afterAll(() => s?.close());

/** The SDK's variables for a stack exporting to `endpoint` with this token. */
const otelEnv = (endpoint: string, token: string, more: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${token}`,
  ...more,
});

test('spans reach a collector with the headers, service name and resource attributes of the environment; traceparent continues', async () => {
  const token = randomBase62(20);
  const r = receiver(`Bearer ${token}`);
  const run = randomBase62(8);
  const stack = await spawnStack(
    s,
    otelEnv(r.endpoint, token, {
      OTEL_SERVICE_NAME: 'studio-under-test',
      OTEL_RESOURCE_ATTRIBUTES: `deployment.environment.name=test,studio.test.run=${run}`,
    }),
  );
  const traceId = '5bf92f3577b34da6a3ce929d0e0e4736';
  let res: Response;
  try {
    res = await fetch(`${stack.urls.management}/v1/instructors`, {
      headers: { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
  } finally {
    await stack.stop();
    r.server.stop(true);
  }
  expect(res.status).toBe(200);
  const [, answeredTrace, gatewaySpanId, flags] = res.headers.get('traceresponse')!.split('-');
  expect([answeredTrace, flags]).toEqual([traceId, '01']);
  expect(r.refused.count).toBe(0);

  const spans = r.spans().filter((x) => x.traceId === traceId);
  const gw = spans.find((x) => x.spanId === gatewaySpanId)!;
  expect(gw).toMatchObject({ parentSpanId: '00f067aa0ba902b7', name: 'GET managementListInstructors' });
  expect(attribute(gw, 'studio.surface')).toBe('management');
  expect(attribute(gw, 'http.response.status_code')).toBe(200);
  const svc = spans.find((x) => x.parentSpanId === gatewaySpanId)!;
  expect(svc.name).toBe('GET managementListInstructors');
  for (const span of [gw, svc])
    expect(span.resource).toMatchObject({
      'service.name': 'studio-under-test',
      'deployment.environment.name': 'test',
      'studio.test.run': run,
    });
}, 30_000);

test('without the header the collector refuses the batch (401): the export fails and the process says so', async () => {
  const r = receiver(`Bearer ${randomBase62(20)}`);
  const stack = await spawnStack(s, { OTEL_EXPORTER_OTLP_ENDPOINT: r.endpoint });
  try {
    expect(
      (await fetch(`${stack.urls.management}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
  } finally {
    await stack.stop();
    r.server.stop(true);
  }
  expect(r.batches).toEqual([]);
  expect(r.refused.count).toBeGreaterThan(0);
  const gateway = stack.procs.find((p) => p.name === 'gateway')!;
  expect(gateway.err.text).toContain('span export failed');
  expect(gateway.err.text).toContain('the collector answered 401');
}, 30_000);

test('OTEL_TRACES_SAMPLER=always_off exports nothing, and tells the next hop the trace is not sampled', async () => {
  const token = randomBase62(20);
  const r = receiver(`Bearer ${token}`);
  const stack = await spawnStack(s, otelEnv(r.endpoint, token, { OTEL_TRACES_SAMPLER: 'always_off' }));
  const traceId = '6bf92f3577b34da6a3ce929d0e0e4736';
  const answers: Response[] = [];
  try {
    for (const traceparent of [null, `00-${traceId}-00f067aa0ba902b7-01`])
      answers.push(
        await fetch(`${stack.urls.management}/v1/instructors`, {
          headers: { authorization: `Bearer ${key}`, ...(traceparent ? { traceparent } : {}) },
        }),
      );
  } finally {
    await stack.stop();
    r.server.stop(true);
  }
  expect(answers.map((a) => a.status)).toEqual([200, 200]);
  const [fresh, continued] = answers.map((a) => a.headers.get('traceresponse')!);
  expect(fresh).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  expect(continued).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`)); // still the caller's trace
  expect([r.batches.length, r.refused.count]).toEqual([0, 0]);
}, 30_000);
