#!/usr/bin/env bun
/**
 * `bun run bench [case…]`: runs the cases of the one table (scripts/bench/cases.ts), each in a process of its own
 * that prints its detail as it goes, then prints every figure against its target and writes one JSON report.
 * Exits 1 when a case fails, voids its run or misses a target. `bun run bench --help` says the rest.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CASES, findCase, formatTarget } from './bench/cases';
import type { CaseResult } from './bench/report';
import { judge, machine, printSummary, type RunCase } from './bench/summary';

const HELP = `bun run bench [options] [case…]   (no case: every case of the table, in its order)

Options:
  --list           the cases: what each measures, its anchor and its targets
  --quick          a smoke run: small counts, one short round; shows the cases work, its figures are no verdict
                   (it exits 1 only when a case fails or voids its run)
  --out <file>     where the JSON report goes (default bench-results/<timestamp>.json)
  --profile <dir>  the gateway writes a CPU profile there, the services (and the hop's Bun floor) in <dir>/<name>; bun run bench:profile <dir> counts one
  --help           this text

Environment (the only variables the benches read):
  BENCH_SERVER_CPU  the core the servers are pinned to with taskset (default 0)
  BENCH_LOAD_CPU    the core of the load: wrk, the events case's receivers (default 1)
  BENCH_SECONDS     seconds a measured run lasts (each case's default: read 10, hop 5, limits 5, replicas 5)
  BENCH_ROUNDS      alternating rounds of the cases that take medians (read 3, hop 3, events 3)

Tools: wrk, taskset, nginx (read, hop), libnginx-mod-http-lua lua-resty-core (hop's Kong-like peer), haproxy (replicas).
Beside it: bun run bench:pair [ref] (a change's CPU, paired) and bun run bench:profile <dir>.`;

const args = process.argv.slice(2);
const flagValue = (flag: string) => {
  const i = args.indexOf(flag);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (!value || value.startsWith('--')) usage(`${flag} needs a value`);
  return value;
};
function usage(message: string): never {
  console.error(`error: ${message}\n\n${HELP}`);
  process.exit(2);
}

if (args.includes('--help') || args.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}
if (args.includes('--list')) {
  for (const c of CASES) {
    const targets = c.targets.map((t) => `${t.what} ${formatTarget(t)}`);
    console.log(`${c.name}\n  measures: ${c.measures}\n  anchor:   ${c.anchor}`);
    console.log(`  targets:  ${targets.length ? targets.join('; ') : 'none (figures only)'}\n`);
  }
  process.exit(0);
}
const quick = args.includes('--quick');
const out = flagValue('--out') ?? join(import.meta.dir, '..', 'bench-results', `${new Date().toISOString()}.json`);
const profile = flagValue('--profile');
const valued = new Set([args.indexOf('--out') + 1, args.indexOf('--profile') + 1].filter((i) => i > 0));
const names = args.filter((a, i) => !valued.has(i) && !a.startsWith('--'));
for (const a of args.filter((a) => a.startsWith('--')))
  if (!['--quick', '--out', '--profile'].includes(a)) usage(`unknown option ${a}`);
for (const n of names) if (!findCase(n)) usage(`no case ${n} (bun run bench --list)`);
const chosen = names.length ? names.map((n) => findCase(n)!) : [...CASES];

const startedAt = new Date().toISOString();
const runs: RunCase[] = [];
for (const c of chosen) {
  const resultFile = join(tmpdir(), `studio-bench-${process.pid}-${c.name}.json`);
  const flags = [...(quick ? ['--quick'] : []), ...(profile ? ['--profile', profile] : [])];
  console.log(`\n== ${c.name}: ${c.measures}`);
  const t0 = performance.now();
  const child = Bun.spawn(['bun', join(import.meta.dir, 'bench', c.file), '--result', resultFile, ...flags], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exitCode = await child.exited;
  let result: CaseResult | null = null;
  try {
    result = JSON.parse(readFileSync(resultFile, 'utf8')) as CaseResult;
  } catch {}
  rmSync(resultFile, { force: true });
  runs.push(judge(c, { exitCode, seconds: (performance.now() - t0) / 1000, result, quick }));
}

const failed = printSummary(runs, quick);
const report = {
  startedAt,
  finishedAt: new Date().toISOString(),
  command: `bun run bench ${args.join(' ')}`.trim(),
  quick,
  settings: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_'))),
  machine: machine(),
  verdict: failed ? 'failed' : quick ? 'smoke run: every case ran' : 'every target met',
  cases: runs,
};
mkdirSync(dirname(out), { recursive: true });
await Bun.write(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nreport: ${out}`);
process.exit(failed ? 1 : 0);
