/**
 * The runner's verdicts (scripts/bench.ts): each case's reported figures against its targets in the table, the
 * printed summary, and what the JSON report says of the machine and the code measured.
 */
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { type BenchCase, formatTarget, holds } from './cases';
import type { CaseResult } from './report';

export interface Figure {
  figure: string;
  value: number | null;
  target: string | null;
  verdict: 'met' | 'missed' | 'not measured' | 'missed (quick run: no verdict)' | null;
}

/** One case as the report keeps it. */
export interface RunCase {
  name: string;
  command: string;
  exitCode: number;
  seconds: number;
  figures: Figure[];
  problems: string[];
  failed: boolean;
}

/** A case's figures against its targets; the figures no target names are kept beside them, unjudged. */
export function judge(
  c: BenchCase,
  run: { exitCode: number; seconds: number; result: CaseResult | null; quick: boolean },
): RunCase {
  const reported = run.result?.figures ?? {};
  const problems = [...(run.result?.problems ?? [])];
  if (run.exitCode !== 0) problems.push(`the case exited ${run.exitCode}`);
  else if (!run.result) problems.push('the case reported no figures');
  const judged: Figure[] = c.targets.map((t) => {
    const value = reported[t.figure] ?? null;
    const verdict =
      value === null
        ? 'not measured'
        : holds(t, value)
          ? 'met'
          : run.quick
            ? 'missed (quick run: no verdict)'
            : 'missed';
    return { figure: t.what, value, target: formatTarget(t), verdict };
  });
  const named = new Set(c.targets.map((t) => t.figure));
  const others: Figure[] = Object.entries(reported)
    .filter(([name]) => !named.has(name))
    .map(([figure, value]) => ({ figure, value, target: null, verdict: null }));
  const failed = problems.length > 0 || judged.some((f) => f.verdict === 'not measured' || f.verdict === 'missed');
  return {
    name: c.name,
    command: `bun run bench ${run.quick ? '--quick ' : ''}${c.name}`,
    exitCode: run.exitCode,
    seconds: Math.round(run.seconds),
    figures: [...judged, ...others],
    problems,
    failed,
  };
}

const formatValue = (v: number | null) =>
  v === null
    ? '-'
    : Number.isInteger(v) || Math.abs(v) >= 100
      ? Math.round(v).toLocaleString('en')
      : v.toFixed(Math.abs(v) >= 10 ? 1 : 2);

/** Prints one table of every case's figures, targets and verdicts; true when a case failed. */
export function printSummary(runs: RunCase[], quick: boolean): boolean {
  const rows = runs.flatMap((r) => [
    ...r.figures.map((f) => [r.name, f.figure, formatValue(f.value), f.target ?? '', f.verdict ?? '']),
    ...r.problems.map((p) => [r.name, p, '', '', 'void']),
  ]);
  const header = ['case', 'figure', 'value', 'target', 'verdict'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 2 ? c.padStart : c.padEnd).call(c, widths[i]!)).join(' | ')} |`;
  console.log(`\n${quick ? 'Smoke run (--quick): no figure below is a verdict\n' : ''}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  const failed = runs.filter((r) => r.failed);
  console.log(
    failed.length
      ? `\nRESULT: ${failed.map((r) => r.name).join(', ')} failed (a target missed or not measured, or the run void)`
      : `\nRESULT: ${quick ? 'every case ran' : 'every target met'}`,
  );
  return failed.length > 0;
}

const firstLine = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe', cwd: join(import.meta.dir, '../..') });
  return r.exitCode === 0 ? `${r.stdout}${r.stderr}`.trim().split('\n')[0]! : null;
};

/** The machine and the code a report was measured on. */
export function machine() {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    bun: Bun.version,
    nginx: Bun.which('nginx') ? firstLine(['nginx', '-v']) : null,
    commit: firstLine(['git', 'rev-parse', 'HEAD']),
    uncommittedChanges: (firstLine(['git', 'status', '--porcelain']) ?? '') !== '',
  };
}
