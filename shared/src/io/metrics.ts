/**
 * Prometheus metrics (docs/design/observability.md), one set per app (two apps built in one process
 * never share counters).
 *
 * prom-client collects the process metrics and writes the exposition of the rare ones;
 * the series counted on every request (requests, durations, key lookups, rate-limit
 * decisions) are plain numbers here, written out at scrape time. prom-client's own
 * label children hash their labels on every increment: on the gateway's cached read
 * that was a tenth of its CPU (`bun run bench`, profile in docs/benchmarks.md).
 *
 * Label values come only from the operations table (`unknown` for anything else) or
 * closed unions, so cardinality is bounded.
 */
import client from 'prom-client';
import type { Surface } from '../operations';

/**
 * Left out, as untrue on Bun: prom-client's event-loop-lag gauges read garbage (NaN, min
 * 9.2e9 s), and its active handles / requests / resources gauges read 0 whatever runs (Bun
 * reports none). Their `nodejs_active_*_total` gauges also failed `promtool check metrics`
 * (a gauge may not end in `_total`), and the names without it are taken by the per-type ones.
 */
const BROKEN_ON_BUN = /^nodejs_(eventloop_lag|active_)/;
/**
 * How often the event-loop-delay histogram behind the lag gauges samples, in ms. Those gauges are removed above, but
 * `collectDefaultMetrics` enables the histogram all the same, and on Bun it is a timer: at prom-client's default of
 * 10 ms it woke every process 100 times a second, idle or not (0.5 % of a core idle, and CPU on every request under
 * load: docs/benchmarks.md, issue 22). Once a minute, nothing reads it and it costs nothing.
 */
const LAG_SAMPLE_MS = 60_000;
export const UNKNOWN_OPERATION = 'unknown';

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

const escapeLabel = (v: string) => v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
const labelText = (names: readonly string[], values: readonly string[]) =>
  names.length ? `{${names.map((n, i) => `${n}="${escapeLabel(values[i]!)}"`).join(',')}}` : '';

/** A counter whose series are plain numbers: `series(values)` once, then `++n.value`. */
class HotCounter {
  private readonly series = new Map<string, { values: string[]; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  child(values: string[]): { value: number } {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { values, value: 0 }));
    return s;
  }

  text(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} counter\n`;
    for (const s of this.series.values()) out += `${this.name}${labelText(this.labelNames, s.values)} ${s.value}\n`;
    return out;
  }
}

class HotHistogram {
  private readonly series = new Map<string, { values: string[]; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {}

  child(values: string[]) {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { values, counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    return s;
  }

  observe(s: ReturnType<HotHistogram['child']>, v: number) {
    s.sum += v;
    s.count++;
    for (let i = 0; i < this.buckets.length; i++) {
      if (v <= this.buckets[i]!) {
        s.counts[i]!++;
        return;
      }
    }
  }

  text(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`;
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        out += `${this.name}_bucket${labelText([...this.labelNames, 'le'], [...s.values, String(le)])} ${cumulative}\n`;
      });
      out += `${this.name}_bucket${labelText([...this.labelNames, 'le'], [...s.values, '+Inf'])} ${s.count}\n`;
      out += `${this.name}_sum${labelText(this.labelNames, s.values)} ${s.sum}\n`;
      out += `${this.name}_count${labelText(this.labelNames, s.values)} ${s.count}\n`;
    }
    return out;
  }
}

/** `studio_http_requests_total` and `studio_http_request_duration_seconds`, and the function that counts one answer. */
function requestSeries(hot: (HotCounter | HotHistogram)[]) {
  const requests = new HotCounter(
    'studio_http_requests_total',
    'Requests answered, by surface, operation (from the operations table) and status.',
    ['surface', 'operation', 'status'],
  );
  const duration = new HotHistogram(
    'studio_http_request_duration_seconds',
    'Time to answer, by surface and operation.',
    ['surface', 'operation'],
    DURATION_BUCKETS,
  );
  hot.push(requests, duration);
  /** Series by surface, operation, then status: three Map lookups per request, nothing built. */
  type Series = { timed: ReturnType<HotHistogram['child']>; byStatus: Map<number, { value: number }> };
  const bySurface = new Map<string, Map<string, Series>>();
  // the series of the call before, whose labels the next call often repeats: then no lookup at all
  let lastSurface = '';
  let lastOp = '';
  let lastStatus = 0;
  let lastCount = { value: 0 };
  let lastSeries: Series | null = null;
  return (surface: Surface | 'dashboard', operation: string | undefined, status: number, seconds: number): void => {
    const op = operation ?? UNKNOWN_OPERATION;
    if (lastSeries && status === lastStatus && op === lastOp && surface === lastSurface) {
      lastCount.value++;
      duration.observe(lastSeries.timed, seconds);
      return;
    }
    let children = bySurface.get(surface);
    if (!children) bySurface.set(surface, (children = new Map()));
    let of = children.get(op);
    if (!of) children.set(op, (of = { timed: duration.child([surface, op]), byStatus: new Map() }));
    let c = of.byStatus.get(status);
    if (!c) of.byStatus.set(status, (c = requests.child([surface, op, String(status)])));
    lastSurface = surface;
    lastOp = op;
    lastStatus = status;
    lastCount = c;
    lastSeries = of;
    c.value++;
    duration.observe(of.timed, seconds);
  };
}

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: LAG_SAMPLE_MS });
  for (const m of registry.getMetricsAsArray()) if (BROKEN_ON_BUN.test(m.name)) registry.removeSingleMetric(m.name);
  const hot: (HotCounter | HotHistogram)[] = [];

  const request = requestSeries(hot);

  return {
    registry,
    /**
     * One answered request (`operation`: an operations-table id, or undefined for anything else;
     * on the dashboard, the name of one of its routes).
     */
    request,
    /** A counter whose label values the caller keeps bounded (a closed union). */
    counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []) {
      const c = new HotCounter(name, help, labelNames);
      hot.push(c);
      const children = new Map<string, { value: number }>();
      const single = labelNames.length === 1 ? labelNames[0]! : null;
      return (labels?: Record<L, string>) => {
        // one label (the usual case): its value is the key, nothing is allocated
        const key = single ? labels![single] : labelNames.map((l) => labels![l]).join('\u0000');
        let child = children.get(key);
        if (!child) children.set(key, (child = c.child(labelNames.map((l) => labels![l]))));
        child.value++;
      };
    },
    /** A counter whose running total lives elsewhere, read when scraped. */
    total(name: string, help: string, read: () => number) {
      new client.Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    },
    /** A gauge read when scraped. */
    gauge(name: string, help: string, read: () => number) {
      new client.Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    },
    /** The answer to `GET /metrics`. */
    async response(): Promise<Response> {
      const text = (await registry.metrics()) + hot.map((m) => m.text()).join('');
      return new Response(text, { headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' } });
    },
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
