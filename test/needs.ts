/**
 * The one way a test says what it needs beyond Bun and a Postgres (which `test/preload.ts` always finds or starts):
 * `needs('redis').describe(…)` / `.test(…)` are bun:test's own when it is there, and otherwise skip, recording the
 * skipped block's or test's name with the reason; the preload prints them all in one line at the end.
 */
import { describe, test } from 'bun:test';
import { relative } from 'node:path';
import { throwawayPostgresBinaries } from '../scripts/lib/throwaway-pg';
import type { Mode } from './harness';

export type Need = 'redis' | 'redis-server' | 'pg-binaries' | 'deno';

/** What each need is, as the summary says it is missing. */
const MISSING: Record<Need, string> = {
  redis: 'no Redis server',
  'redis-server': 'no redis-server binary',
  'pg-binaries': 'no initdb and pg_ctl',
  deno: 'no deno (npm i -g deno)',
};

/**
 * Whether a need is met; asked when a test file registers its tests, after the preload has set TEST_REDIS_URL.
 * `pg-binaries`: initdb and pg_ctl where scripts/lib/throwaway-pg.ts looks for them.
 */
export function has(need: Need): boolean {
  switch (need) {
    case 'redis':
      return process.env.TEST_REDIS_URL !== 'none';
    case 'redis-server':
      return Bun.which('redis-server') !== null && Bun.which('redis-cli') !== null;
    case 'pg-binaries':
      return throwawayPostgresBinaries() !== null;
    case 'deno':
      return Bun.which('deno') !== null;
  }
}

/** What was skipped, by reason: each block's and each test's `file › name`. */
export const skipped = new Map<string, { blocks: string[]; tests: string[] }>();

const root = `${import.meta.dir}/..`;

/** The test file that called `needs` (the first frame outside this file). */
function callerFile(): string {
  for (const line of (new Error().stack ?? '').split('\n').slice(1)) {
    const file = /\(?((?:\/|[A-Za-z]:\\)[^():]+):\d+:\d+\)?$/.exec(line.trim())?.[1];
    if (file && file !== import.meta.path) return relative(root, file);
  }
  return '?';
}

type Describe = (label: string, fn: () => void) => void;
type TestOptions = Parameters<typeof test.skip>[2];
type Test = (label: string, fn: () => undefined | Promise<unknown>, options?: TestOptions) => void;

/** bun:test's `describe` and `test` when every need is met; otherwise ones that skip and say why in the summary. */
export function needs(...what: Need[]): { describe: Describe; test: Test; met: boolean } {
  const missing = what.filter((need) => !has(need));
  if (!missing.length) return { describe, test: test as Test, met: true };
  const reason = missing.map((need) => MISSING[need]).join(', ');
  const file = callerFile();
  const record = (kind: 'blocks' | 'tests', label: string) => {
    const entry = skipped.get(reason) ?? { blocks: [], tests: [] };
    entry[kind].push(`${file} › ${label}`);
    skipped.set(reason, entry);
  };
  return {
    describe: (label, fn) => {
      record('blocks', label);
      describe.skip(label, fn);
    },
    test: (label, fn, options) => {
      record('tests', label);
      test.skip(label, fn, options);
    },
    met: false,
  };
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** The summary's lines, one per reason, naming what was skipped (bun's own list below names each test of a block). */
export function skippedSummary(): string[] {
  return [...skipped].map(([reason, { blocks, tests }]) => {
    const parts = [
      blocks.length ? `${count(blocks.length, 'block')} (${blocks.join(', ')})` : '',
      tests.length ? `${count(tests.length, 'test')} (${tests.join(', ')})` : '',
    ].filter(Boolean);
    return `tests: skipped (${reason}) ${parts.join(' and ')}`;
  });
}

/** For a MODES loop (test/harness.ts): the Redis mode's block needs a Redis server, the single-node one nothing. */
export const inEachMode = (mode: Mode) => (mode === 'redis' ? needs('redis') : needs());
