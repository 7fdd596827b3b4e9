/** The bench runner (scripts/bench.ts) and its one table (scripts/bench/cases.ts). */
import { expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CASES } from '../scripts/bench/cases';

const root = join(import.meta.dir, '..');
// on the suite's Postgres (test/preload.ts), which may be one of its own rather than the machine's
const env = { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL };
const bench = (...args: string[]) =>
  Bun.spawnSync(['bun', join(root, 'scripts/bench.ts'), ...args], { cwd: root, env, stdout: 'pipe', stderr: 'pipe' });

test('bun run bench --list prints every case of the table', () => {
  const run = bench('--list');
  expect(run.exitCode).toBe(0);
  const listed = [...run.stdout.toString().matchAll(/^(\S+)$/gm)].map((m) => m[1]);
  expect(listed).toEqual(CASES.map((c) => c.name));
  for (const c of CASES) expect(existsSync(join(root, 'scripts/bench', c.file))).toBe(true);
});

test('package.json keeps at most three bench scripts', async () => {
  const { scripts } = (await Bun.file(join(root, 'package.json')).json()) as { scripts: Record<string, string> };
  expect(Object.keys(scripts).filter((name) => name === 'bench' || name.startsWith('bench:')).length).toBeLessThan(4);
});

test('an unknown case is refused before anything runs', () => {
  const run = bench('no-such-case');
  expect(run.exitCode).toBe(2);
  expect(run.stderr.toString()).toContain('no case no-such-case');
});

test('a quick run of one cheap case prints its figures and writes the report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'studio-bench-test-'));
  try {
    const out = join(dir, 'report.json');
    const run = bench('--quick', 'management', '--out', out);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.toString()).toContain('RESULT: every case ran');
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.quick).toBe(true);
    expect(report.cases.map((c: any) => c.name)).toEqual(['management']);
    expect(report.cases[0].figures.length).toBeGreaterThan(0);
    expect(report.cases[0].failed).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
