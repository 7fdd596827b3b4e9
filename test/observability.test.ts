/**
 * docs/design/observability.md from outside: metrics on the gateway's operations port and each
 * service's own port, W3C trace context across gateway and service (with spans
 * collected by an OTLP/HTTP receiver inside the test), activity entries that carry
 * the trace id and problem code.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createManagementService } from '@studio/management-service';
import { createMetrics, createTracing } from '@studio/shared/io';
import { type Stack, startStack } from './harness';

/** An OTLP/HTTP (JSON) receiver: the spans it was sent. */
type Span = { traceId: string; spanId: string; parentSpanId?: string; name: string; service: string };
const received: Span[] = [];
const collector = Bun.serve({
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as {
      resourceSpans: {
        resource: { attributes: { key: string; value: { stringValue?: string } }[] };
        scopeSpans: { spans: Omit<Span, 'service'>[] }[];
      }[];
    };
    for (const rs of body.resourceSpans) {
      const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      for (const ss of rs.scopeSpans) for (const span of ss.spans) received.push({ ...span, service });
    }
    return Response.json({});
  },
});

/**
 * The SDK reads its variables from the process environment itself (the stack is built in this process): set for
 * this file only, and batches sent every 100 ms instead of every 5 s.
 */
function setOtelEnv(vars: Record<string, string>): () => void {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(before))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  };
}

let s: Stack;
let key: string;
let studioId: string;
let restoreEnv = () => {};
beforeAll(async () => {
  const endpoint = `http://127.0.0.1:${collector.port}`;
  restoreEnv = setOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' });
  s = await startStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
  studioId = (await s.studio()).id;
  key = (await s.key(studioId, 'secret', ['instructors:read', 'instructors:write'])).key;
});
afterAll(async () => {
  await s.close();
  restoreEnv();
  collector.stop(true);
});

/** Value of one sample of the exposition text, or 0. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (want.every((l) => line.includes(l))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('trace context', () => {
  test("a valid traceparent is continued: the answer's traceresponse and the activity entry carry its trace id", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await s.mg('/v1/instructors', key, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(res.status).toBe(200);
    const tr = res.headers.get('traceresponse')!;
    expect(tr).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(tr.split('-')[1]).toBe(traceId);
    expect(tr.split('-')[2]).not.toBe('00f067aa0ba902b7'); // the gateway's own span
    await s.gateway.activity.flush();
    const [row] = await s.sql<
      { traceId: string }[]
    >`select trace_id from activity where request_id = ${res.headers.get('x-request-id')}`;
    expect(row!.traceId).toBe(traceId);
  });

  test('an invalid traceparent starts a new trace; so does none; problems carry traceresponse too', async () => {
    for (const bad of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      'garbage',
    ]) {
      const tr = (await s.mg('/v1/instructors', key, { headers: { traceparent: bad } })).headers.get('traceresponse')!;
      expect(tr).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(tr).not.toContain('4bf92f3577b34da6a3ce929d0e0e4736');
    }
    const refused = await s.mg('/v1/instructors', null);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('traceresponse')).toMatch(/^00-[0-9a-f]{32}-/);
  });

  test("the gateway and the service each export a span of the same trace, the service's a child of the gateway's", async () => {
    const traceId = 'a3ce929d0e0e47364bf92f3577b34da6';
    const res = await s.mg('/v1/instructors', key, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
    expect(res.status).toBe(200);
    const gatewaySpan = res.headers.get('traceresponse')!.split('-')[2];
    let spans: Span[] = [];
    for (let i = 0; i < 50 && spans.length < 2; i++) {
      await Bun.sleep(100);
      spans = received.filter((x) => x.traceId === traceId);
    }
    const gw = spans.find((x) => x.service === 'gateway')!;
    const svc = spans.find((x) => x.service === 'management-service')!;
    expect(gw).toMatchObject({
      spanId: gatewaySpan,
      parentSpanId: 'b7ad6b7169203331',
      name: 'GET managementListInstructors',
    });
    expect(svc.parentSpanId).toBe(gatewaySpan);
    expect(svc.name).toBe('GET managementListInstructors');
  });

  test("a dashboard request is a span of its trace too, exported as the API's are", async () => {
    const traceId = 'e3ce929d0e0e47364bf92f3577b34da9';
    const res = await fetch(`${s.dashboardUrl}/sign-in`, {
      headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    });
    expect(res.status).toBe(200);
    const spanId = res.headers.get('traceresponse')!.split('-')[2];
    for (let i = 0; i < 50 && !received.some((x) => x.traceId === traceId); i++) await Bun.sleep(100);
    expect(received.find((x) => x.traceId === traceId)).toMatchObject({
      service: 'dashboard',
      spanId,
      parentSpanId: 'b7ad6b7169203331',
      name: 'GET /sign-in',
    });
  });

  test('sampled is bit 0 of the flags: 03 (sampled, random trace id) is exported by both; 02 by neither', async () => {
    const sampled = 'c3ce929d0e0e47364bf92f3577b34da7';
    const unsampled = 'd3ce929d0e0e47364bf92f3577b34da8';
    for (const [traceId, flags] of [
      [sampled, '03'],
      [unsampled, '02'],
    ] as const) {
      const res = await s.mg('/v1/instructors', key, {
        headers: { traceparent: `00-${traceId}-b7ad6b7169203331-${flags}` },
      });
      expect(res.headers.get('traceresponse')).toEndWith(`-${flags}`);
    }
    for (let i = 0; i < 50 && received.filter((x) => x.traceId === sampled).length < 2; i++) await Bun.sleep(100);
    expect(new Set(received.filter((x) => x.traceId === sampled).map((x) => x.service))).toEqual(
      new Set(['gateway', 'management-service']),
    );
    expect(received.filter((x) => x.traceId === unsampled)).toEqual([]);
  });
});

describe('metrics', () => {
  test('the operations port counts requests by surface, operation and status; unknown paths are one label', async () => {
    const before = await (await fetch(`${s.opsUrl}/metrics`)).text();
    const n = sample(before, 'studio_http_requests_total', {
      surface: 'management',
      operation: 'managementListInstructors',
      status: '200',
    });
    await s.mg('/v1/instructors', key);
    await s.mg('/v1/instructors', key);
    await s.mg('/v1/no-such-thing', key);
    await s.mg('/v1/no-such-thing/either', key);
    const res = await fetch(`${s.opsUrl}/metrics`);
    expect(res.headers.get('content-type')).toStartWith('text/plain');
    const text = await res.text();
    expect(
      sample(text, 'studio_http_requests_total', {
        surface: 'management',
        operation: 'managementListInstructors',
        status: '200',
      }),
    ).toBe(n + 2);
    expect(
      sample(text, 'studio_http_requests_total', { surface: 'management', operation: 'unknown', status: '404' }),
    ).toBeGreaterThanOrEqual(2);
    expect(text).not.toContain('no-such-thing');
    expect(
      sample(text, 'studio_http_request_duration_seconds_count', {
        surface: 'management',
        operation: 'managementListInstructors',
      }),
    ).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'studio_rate_limit_decisions_total', { decision: 'allowed' })).toBeGreaterThan(0);
    expect(sample(text, 'studio_key_cache_lookups_total', { result: 'memory' })).toBeGreaterThan(0);
    expect(text).toContain('studio_activity_buffered');
    expect(text).toContain('studio_activity_written_total');
    expect(text).toMatch(/^studio_activity_flush_failures_total \d+$/m);
    // every line is a comment, blank, or `name{labels} value`
    for (const line of text.split('\n'))
      expect(
        line === '' ||
          line.startsWith('#') ||
          /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? -?[0-9.e+-]+$|^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? (NaN|\+Inf|-Inf)$/.test(
            line,
          ),
      ).toBe(true);
  });

  test('metrics and the ops port are not on the public surfaces', async () => {
    expect((await s.mg('/metrics', null)).status).toBe(404);
    expect((await s.sf('/metrics', null)).status).toBe(404);
    expect((await fetch(`${s.opsUrl}/readyz`)).status).toBe(200);
  });

  test('each answer is counted in its own series, whatever the answer before it was', async () => {
    const metrics = createMetrics();
    // each label changes alone from one call to the next once
    const calls = [
      ['storefront', 'opA', 200],
      ['storefront', 'opA', 200],
      ['management', 'opA', 200],
      ['management', 'opB', 200],
      ['management', 'opB', 404],
      ['storefront', 'opA', 200],
    ] as const;
    for (const [surface, operation, status] of calls) metrics.request(surface, operation, status, 0.002);
    const text = await (await metrics.response()).text();
    const count = (surface: string, operation: string, status: string) =>
      sample(text, 'studio_http_requests_total', { surface, operation, status });
    expect(count('storefront', 'opA', '200')).toBe(3);
    expect(count('management', 'opA', '200')).toBe(1);
    expect(count('management', 'opB', '200')).toBe(1);
    expect(count('management', 'opB', '404')).toBe(1);
    const timed = (surface: string, operation: string) =>
      sample(text, 'studio_http_request_duration_seconds_count', { surface, operation });
    expect([timed('storefront', 'opA'), timed('management', 'opA'), timed('management', 'opB')]).toEqual([3, 1, 2]);
  });

  test.skipIf(process.platform !== 'linux')(
    'the process metrics keep no timer ticking: a process that collects them sleeps while idle',
    async () => {
      // its main thread's voluntary context switches over a second: each wake from the event loop's wait is one
      const child = Bun.spawn(
        [
          'bun',
          '-e',
          `import { createMetrics } from '@studio/shared/io';
          import { readFileSync } from 'node:fs';
          const switches = () => Number(/^voluntary_ctxt_switches:\\s+(\\d+)/m.exec(readFileSync('/proc/thread-self/status', 'utf8'))[1]);
          createMetrics();
          await Bun.sleep(200);
          const before = switches();
          await Bun.sleep(1000);
          console.log(switches() - before);`,
        ],
        { cwd: `${import.meta.dir}/..`, stdout: 'pipe', stderr: 'inherit' },
      );
      const wakes = Number((await new Response(child.stdout).text()).trim());
      expect(await child.exited).toBe(0);
      // prom-client's event-loop-delay sampler at its default 10 ms made this about 100
      expect(wakes).toBeLessThan(30);
    },
  );

  test("management-service's write counters are on /metrics from its start, before any write", async () => {
    const metrics = createMetrics();
    createManagementService({ config: s.config, sql: s.sql, redis: null, metrics });
    const text = await (await metrics.response()).text();
    expect(text).toContain('# TYPE studio_idempotency_outcomes_total counter');
    expect(text).toContain('# TYPE studio_events_recorded_total counter');
  });

  test('each service counts on its own port, labelled by the signed operation; idempotency outcomes are counted', async () => {
    const body = JSON.stringify({ name: 'Noor' });
    const headers = { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() };
    expect((await s.mg('/v1/instructors', key, { method: 'POST', body, headers })).status).toBe(201);
    expect(
      (await s.mg('/v1/instructors', key, { method: 'POST', body, headers })).headers.get('idempotent-replayed'),
    ).toBe('true');
    const text = await (await fetch(`${s.managementServiceUrl}/metrics`)).text();
    expect(
      sample(text, 'studio_http_requests_total', {
        surface: 'management',
        operation: 'managementCreateInstructor',
        status: '201',
      }),
    ).toBe(2);
    expect(sample(text, 'studio_idempotency_outcomes_total', { outcome: 'new' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'studio_idempotency_outcomes_total', { outcome: 'replayed' })).toBeGreaterThanOrEqual(1);
    const sf = await (await fetch(`${s.storefrontServiceUrl}/metrics`)).text();
    expect(sf).toContain('studio_http_requests_total');
  });
});

test('an activity entry keeps the problem code and the query string of a refused call', async () => {
  const res = await s.mg('/v1/instructors?cursor=nonsense', key);
  expect(res.status).toBe(400);
  await s.gateway.activity.flush();
  const [row] = await s.sql<
    { problemCode: string; query: string }[]
  >`select problem_code, query from activity where request_id = ${res.headers.get('x-request-id')}`;
  expect(row).toEqual({ problemCode: 'invalid_cursor', query: 'cursor=nonsense' });
});

describe('span export at its limits', () => {
  /** A tracing of its own, exporting to `url`, with one span of a request ended. */
  function tracingWithSpan(url: string) {
    const restore = setOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: url });
    try {
      const tracing = createTracing(url, 'test')!;
      tracing.end(tracing.start(null), { method: 'GET', path: '/x', status: 200, operation: 'x' });
      return tracing;
    } finally {
      restore();
    }
  }

  test('a collector that never answers holds a stopping process at most the flush deadline; what is left is dropped, and said', async () => {
    // accepts the connection and never answers
    const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
    const tracing = tracingWithSpan(`http://127.0.0.1:${silent.port}`);
    const lines = captureLogs();
    try {
      const t = performance.now();
      await tracing.shutdown(300);
      expect(performance.now() - t).toBeLessThan(1_000);
      expect(lines().some((l) => l.includes('span export failed') && l.includes('not sent within 300 ms'))).toBe(true);
    } finally {
      lines.stop();
      silent.stop(true);
    }
  });

  test('a collector that refuses the batch (404, a wrong path) is a failed export, logged, not a silent success', async () => {
    const refusing = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('no', { status: 404 }) });
    const tracing = tracingWithSpan(`http://127.0.0.1:${refusing.port}`);
    const lines = captureLogs();
    try {
      await tracing.shutdown(2_000);
      expect(lines().some((l) => l.includes('span export failed') && l.includes('answered 404'))).toBe(true);
    } finally {
      lines.stop();
      refusing.stop(true);
    }
  });
});

/** The warning lines this process writes meanwhile (stderr), until `stop`. */
function captureLogs() {
  const seen: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void seen.push(args.map(String).join(' '));
  return Object.assign(() => seen, { stop: () => void (console.error = original) });
}
