/**
 * The `sdk` case (`bun run bench sdk`): what the SDK adds to a call (docs/design/sdk.md). The same uncached
 * Management read (`GET /v1/instructors`, 20 rows, the hop's) through the gateway, made by `studio.instructors.list()`
 * of the built package and by a bare `fetch` with the key and `JSON.parse`, in turns within one run (each
 * worker alternating the two call by call, so both meet the same moments of a shared machine), from this process on
 * the load core while the stack runs on the server core. Figure: the median call's time, SDK over bare fetch (median
 * of rounds).
 */
import { join } from 'node:path';
import { alternate, type Call } from './alternate';
import { seedInstructors } from './instructors';
import { caseFlags, caseOptions, report } from './report';
import { createBenchStack, root } from './stack';
import { median } from './stats';

const { SECONDS, ROUNDS, SERVER_CPU, LOAD_CPU } = caseOptions({ seconds: 3, rounds: 6 });
/** Calls in flight at once: a server's handful, not a flood (the gateway's limits are another case's). */
const CONCURRENCY = 4;

// the client on the load core, away from the stack's
Bun.spawnSync(['taskset', '-cp', LOAD_CPU, String(process.pid)], { stdout: 'ignore', stderr: 'ignore' });
// the package as it ships: dist/, which `@studio/sdk` resolves to
const build = Bun.spawnSync(['bun', 'run', 'build'], { cwd: join(root, 'sdk'), stdout: 'ignore', stderr: 'pipe' });
if (build.exitCode !== 0) throw new Error(`sdk build failed: ${build.stderr}`);
const { Studio } = await import('@studio/sdk');

interface Round {
  sdkMs: number;
  fetchMs: number;
}

/** CONCURRENCY workers for SECONDS, each alternating an SDK call and a bare one: the median time of each. */
async function round(sdk: Call, bare: Call, seconds: number): Promise<Round> {
  const { a, b } = await alternate(sdk, bare, seconds, CONCURRENCY);
  return { sdkMs: a, fetchMs: b };
}

const stack = await createBenchStack(SERVER_CPU);
const problems: string[] = [];
try {
  const { secret } = await seedInstructors(stack.config.DATABASE_URL, 'Bench sdk');
  await stack.start(['management-service', 'gateway']);
  const baseUrl = stack.config.MANAGEMENT_PUBLIC_URL;
  const studio = new Studio({ apiKey: secret.key as `svc_sk_${string}`, baseUrl });
  const url = `${baseUrl}/v1/instructors`;
  const headers = { authorization: `Bearer ${secret.key}` };
  const bare: Call = async () => {
    const res = await fetch(url, { headers });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`bare fetch: ${res.status} ${body}`);
    return JSON.parse(body);
  };
  const sdk: Call = async () => {
    const page = await studio.instructors.list();
    if (page.data.length !== 20) throw new Error(`sdk: ${page.data.length} instructors`);
    return page;
  };
  // warm-up: connections, JIT, the gateway's key cache
  await round(sdk, bare, 1);
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const x = await round(sdk, bare, SECONDS);
    rounds.push(x);
    console.log(
      `round ${r + 1}: fetch ${x.fetchMs.toFixed(3)} ms, sdk ${x.sdkMs.toFixed(3)} ms (medians), ratio ${(x.sdkMs / x.fetchMs).toFixed(3)}`,
    );
  }
  const of = (f: (x: Round) => number) => median(rounds.map(f));
  report(
    {
      ratio: +of((x) => x.sdkMs / x.fetchMs).toFixed(3),
      'fetch ms/call': +of((x) => x.fetchMs).toFixed(3),
      'sdk ms/call': +of((x) => x.sdkMs).toFixed(3),
    },
    problems,
  );
  if (caseFlags.quick) console.log('(--quick: one short round, no verdict)');
} catch (err) {
  problems.push(String(err));
  report({}, problems);
} finally {
  await stack.stop();
}
