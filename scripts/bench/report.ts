/**
 * A case's side of the runner (scripts/bench.ts): the flags the runner passes it, and the figures it hands back.
 * A case prints its own detail as it goes; it reports its figures (those its targets name in cases.ts, and any
 * others worth keeping) and the problems that void a run (an answer that was not 2xx, a check that did not hold)
 * to the file `--result` names. The runner checks the targets; a case only measures.
 */
import { writeFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const flagValue = (flag: string) => {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
};

export const caseFlags = {
  /** A smoke run: small counts and one short round, to show the case works; its figures are no verdict. */
  quick: argv.includes('--quick'),
  /** Where to write the figures (JSON). */
  result: flagValue('--result'),
  /** Where the stack's processes (and the hop's floor) write a CPU profile when they stop: the gateway's there, the others' in a folder each. */
  profile: flagValue('--profile'),
};

/**
 * The operator's settings, the only variables the benches read (documented in `bun run bench --help`):
 * BENCH_SECONDS and BENCH_ROUNDS (each case's own defaults; one short round with --quick), BENCH_SERVER_CPU (the
 * servers' core, default 0) and BENCH_LOAD_CPU (the load's, default 1).
 */
export function caseOptions(defaults: { seconds: number; rounds: number }) {
  const env = process.env;
  // named as the cases' constants, so that each takes them in one line
  return {
    SECONDS: Number(env.BENCH_SECONDS ?? (caseFlags.quick ? 1 : defaults.seconds)),
    ROUNDS: Number(env.BENCH_ROUNDS ?? (caseFlags.quick ? 1 : defaults.rounds)),
    SERVER_CPU: env.BENCH_SERVER_CPU ?? '0',
    LOAD_CPU: env.BENCH_LOAD_CPU ?? '1',
  };
}

/** What a case hands the runner. */
export interface CaseResult {
  figures: Record<string, number>;
  problems: string[];
}

/** Writes the case's figures for the runner (and prints them when run alone). */
export function report(figures: Record<string, number>, problems: string[] = []) {
  const result: CaseResult = { figures, problems };
  if (caseFlags.result) writeFileSync(caseFlags.result, JSON.stringify(result));
  else console.log(JSON.stringify(result, null, 2));
}
