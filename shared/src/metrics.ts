/**
 * Prometheus metrics (contract §13), one registry per app (two apps built in one
 * process never share counters). prom-client does the exposition format; its label
 * children are looked up once per (operation, status) and kept, so counting a
 * request is a Map lookup and two increments (about 0.3 µs).
 *
 * Label values come only from the operations table (`unknown` for anything else),
 * so cardinality is bounded by the table.
 */
import client from 'prom-client';
import type { Surface } from './operations';

/** prom-client's event-loop-lag gauges read garbage on Bun (NaN, min 9.2e9 s): left out. */
const BROKEN_ON_BUN = /^nodejs_eventloop_lag/;
export const UNKNOWN_OPERATION = 'unknown';

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

type Child = { inc(): void };
type Timer = { observe(v: number): void };

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  for (const m of registry.getMetricsAsArray()) if (BROKEN_ON_BUN.test(m.name)) registry.removeSingleMetric(m.name);

  const requests = new client.Counter({
    name: 'studio_http_requests_total', help: 'Requests answered, by surface, operation (from the operations table) and status.',
    labelNames: ['surface', 'operation', 'status'] as const, registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'studio_http_request_duration_seconds', help: 'Time to answer, by surface and operation.',
    labelNames: ['surface', 'operation'] as const, buckets: DURATION_BUCKETS, registers: [registry],
  });
  const counted = new Map<string, Child>();
  const timed = new Map<string, Timer>();

  return {
    registry,
    /** One answered request (`operation`: an operations-table id, or undefined for anything else). */
    request(surface: Surface, operation: string | undefined, status: number, seconds: number) {
      const op = operation ?? UNKNOWN_OPERATION;
      const key = `${surface} ${op} ${status}`;
      let c = counted.get(key);
      if (!c) counted.set(key, (c = requests.labels(surface, op, String(status))));
      c.inc();
      const tk = `${surface} ${op}`;
      let t = timed.get(tk);
      if (!t) timed.set(tk, (t = duration.labels(surface, op)));
      t.observe(seconds);
    },
    /** A counter whose label values the caller keeps bounded (a closed union). */
    counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []) {
      const c = new client.Counter({ name, help, labelNames, registers: [registry] });
      const children = new Map<string, Child>();
      return (labels?: Record<L, string>) => {
        if (!labels) return c.inc();
        const key = labelNames.map((l) => labels[l]).join(' ');
        let child = children.get(key);
        if (!child) children.set(key, (child = c.labels(labels as never)));
        child.inc();
      };
    },
    /** A counter whose running total lives elsewhere, read when scraped. */
    total(name: string, help: string, read: () => number) {
      new client.Counter({ name, help, registers: [registry], collect() { this.reset(); this.inc(read()); } });
    },
    /** A gauge read when scraped. */
    gauge(name: string, help: string, read: () => number) {
      new client.Gauge({ name, help, registers: [registry], collect() { this.set(read()); } });
    },
    /** The answer to `GET /metrics`. */
    async response(): Promise<Response> {
      return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' } });
    },
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
