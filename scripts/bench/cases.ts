/**
 * THE table of benches: every case `bun run bench` runs, what it measures, what it is compared with, and the
 * targets it is held to. A case's module (`file`, under scripts/bench) measures and reports its figures
 * (report.ts); the runner checks them against these targets, so each target is written here once and read by
 * both. A case with no target reports figures only.
 */

/** A figure a case must hold: the one its module reports as `figure`, at least (`>=`) or at most (`<=`) `value`. */
export interface Target {
  figure: string;
  what: string;
  op: '>=' | '<=';
  value: number;
  unit: string;
}

export interface BenchCase {
  name: string;
  measures: string;
  /** What the figures are compared with. */
  anchor: string;
  file: string;
  targets: readonly Target[];
}

export const CASES = [
  {
    name: 'read',
    measures: 'the cached Storefront read (GET /v1/classes, 500 classes, gzip) through the gateway',
    anchor: 'an Elysia hello-world behind nginx, same machine, same run (a Bun.serve hello-world for scale)',
    file: 'read.ts',
    targets: [
      { figure: 'ratio', what: 'req/s over the anchor (median of rounds)', op: '>=', value: 1.0, unit: '×' },
      { figure: 'p99', what: 'gateway p99 (median of rounds)', op: '<=', value: 5, unit: 'ms' },
      {
        figure: 'accessLines',
        what: 'req/s without access lines over with (what they cost)',
        op: '<=',
        value: 1.05,
        unit: '×',
      },
    ],
  },
  {
    name: 'hop',
    measures: 'the forwarding hop: an uncached Management read (GET /v1/instructors, 20 rows) through the gateway',
    anchor: 'the Bun floor (Bun.serve over the same pool, fixed headers) and a Kong-like peer (nginx + Lua)',
    file: 'hop.ts',
    targets: [
      {
        figure: 'floorCpu',
        what: "CPU a request over the Bun floor's, loaded at once",
        op: '<=',
        value: 1.3,
        unit: '×',
      },
      { figure: 'peerRps', what: "req/s over the Kong-like peer's", op: '>=', value: 0.9, unit: '×' },
      { figure: 'peerP99', what: "p99 over the Kong-like peer's", op: '<=', value: 1.25, unit: '×' },
    ],
  },
  {
    name: 'events',
    measures: 'webhooks: a write with 16 endpoints against none, dispatcher throughput, commit-to-delivery delay',
    anchor: 'the same write into a studio with no endpoint; absolute targets for throughput and delay',
    file: 'events.ts',
    targets: [
      { figure: 'writeP50', what: 'write p50 with 16 endpoints over none', op: '<=', value: 1.1, unit: '×' },
      { figure: 'throughput', what: 'deliveries a second, 4 receivers', op: '>=', value: 1_000, unit: '/s' },
      { figure: 'delayP50', what: 'commit to delivery, median', op: '<=', value: 200, unit: 'ms' },
    ],
  },
  {
    name: 'management',
    measures:
      'Management in-process: a list page at 1,000 and 1,000,000 classes (first and deep), a 52-occurrence create',
    anchor: 'absolute: a create beside another studio of 1,000,000 classes costs what it costs beside 1,000',
    file: 'management.ts',
    targets: [
      {
        figure: 'create p50 ms, 52 occurrences',
        what: 'a 52-occurrence create, another studio holding 1,000,000 classes',
        op: '<=',
        value: 100,
        unit: 'ms',
      },
    ],
  },
  {
    name: 'sandbox',
    measures: "test mode: making a sandbox (a studio seeded with the demo's records) and resetting a used one",
    anchor: 'absolute: the bounds test mode promises (docs/design/test-mode.md)',
    file: 'sandbox.ts',
    targets: [
      { figure: 'create p50 ms', what: 'a sandbox made and seeded, median of 10', op: '<=', value: 1_000, unit: 'ms' },
      {
        figure: 'reset p50 ms',
        what: 'a sandbox with 2,000 events reset and seeded again, median of 10',
        op: '<=',
        value: 2_000,
        unit: 'ms',
      },
    ],
  },
  {
    name: 'sdk',
    measures: "the SDK's cost per call: studio.instructors.list() of the built package, GET /v1/instructors (20 rows)",
    anchor: 'a bare fetch of the same call with the key and JSON.parse, in turns in the same run',
    file: 'sdk.ts',
    targets: [
      {
        figure: 'ratio',
        what: 'time per call over the bare fetch (median of rounds)',
        op: '<=',
        value: 1.05,
        unit: '×',
      },
    ],
  },
  {
    name: 'mcp',
    measures:
      "the MCP server's cost per call: the instructors_list tool called by the MCP SDK's client over Streamable HTTP, GET /v1/instructors (20 rows)",
    anchor: "the SDK's studio.instructors.list() of the same read, in turns in the same run",
    file: 'mcp.ts',
    targets: [
      {
        figure: 'over',
        what: 'median tool call over the median SDK call (median of rounds)',
        op: '<=',
        value: 2,
        unit: 'ms',
      },
    ],
  },
  {
    name: 'limits',
    measures: 'one 10:10 secret key hammered through two gateway replicas sharing one Redis',
    anchor: "the limit's own allowance (burst + rate × seconds)",
    file: 'limits.ts',
    targets: [{ figure: 'admitted', what: 'requests admitted over the allowance', op: '<=', value: 1, unit: '×' }],
  },
  {
    name: 'replicas',
    measures: 'two replicas of every process behind HAProxy: reads through the fronts, revocation, invalidation',
    anchor: 'every call answered, a revoke and a write seen by both gateways at once',
    file: 'replicas.ts',
    targets: [{ figure: 'failedChecks', what: 'checks failed of 4', op: '<=', value: 0, unit: '' }],
  },
  {
    name: 'memory',
    measures: "the gateway's RSS idle, and after cycles of reads with 100,000 distinct and 100,000 unknown keys",
    anchor: 'absolute: idle RSS, and the last cycle against the one before (bounded, not growing with keys)',
    file: 'memory.ts',
    targets: [
      { figure: 'idleMb', what: 'RSS idle', op: '<=', value: 100, unit: 'MB' },
      { figure: 'lastGrowth', what: 'high-water RSS, last cycle over the one before', op: '<=', value: 5, unit: '%' },
    ],
  },
  {
    name: 'activity-plan',
    measures: "EXPLAIN (ANALYZE) of the dashboard's activity queries at 1,000,000 entries of one studio",
    anchor: 'the plans: index scans of the batches only',
    file: 'activity-plan.ts',
    targets: [{ figure: 'seqScans', what: 'plans reading activity sequentially', op: '<=', value: 0, unit: '' }],
  },
  {
    name: 'events-plan',
    measures: "EXPLAIN (ANALYZE) of GET /v1/events's queries at 10,000,000 events of one studio (4.4 GB)",
    anchor: 'the plans: index scans under their LIMIT only',
    file: 'events-plan.ts',
    targets: [{ figure: 'offIndex', what: 'plans scanning or sorting events', op: '<=', value: 0, unit: '' }],
  },
] as const satisfies readonly BenchCase[];

export type CaseName = (typeof CASES)[number]['name'];
type FigureOf<N extends CaseName> = Extract<(typeof CASES)[number], { name: N }>['targets'][number]['figure'];

export const findCase = (name: string): BenchCase | undefined => CASES.find((c) => c.name === name);

/** A case's target for one of its figures (checked by the compiler: a case cannot name a target it does not have). */
export function target<N extends CaseName>(name: N, figure: FigureOf<N>): Target {
  return (findCase(name)!.targets as readonly Target[]).find((t) => t.figure === figure)!;
}

/** Whether `value` holds `t` (NaN, a figure not measured, never does). */
export const holds = (t: Target, value: number): boolean => (t.op === '>=' ? value >= t.value : value <= t.value);

/** `≥ 1×`, `≤ 5 ms`, `≥ 1,000/s`, `≤ 0`. */
export const formatTarget = (t: Target): string =>
  `${t.op === '>=' ? '≥' : '≤'} ${t.value.toLocaleString('en')}${/^(|×|%|\/s)$/.test(t.unit) ? t.unit : ` ${t.unit}`}`;
