#!/usr/bin/env bun
/**
 * `bun run bench:pair [git ref]`: how much CPU a change saves the gateway, on a VM whose speed
 * drifts by tens of percent within a minute (docs/benchmarks.md, issue 22). Two gateways run
 * side by side on the server core in front of one management-service: A from this working tree,
 * B from the ref (default HEAD, checked out in a temporary worktree). Two wrk processes on the load
 * core load both at the same time with the hop bench's uncached read (`GET /v1/instructors`, 20
 * rows), so the drift falls on both alike; each round gives B's CPU per request over A's (from
 * /proc), after 10 s of load on both (their JIT's work is not counted). `BENCH_SECONDS` (4), `BENCH_ROUNDS`
 * (6) and the CPUs as `bun run bench --help` says.
 * Prints every round and the median: above 1, the working tree spends less.
 *
 * `--b-env '{"NAME":"value"}'` is added to B's environment only, to weigh a runtime setting on one code.
 * With the working tree on both sides (`bun run bench:pair --control`) the ratio shows the noise.
 * `--cached` loads the cached Storefront read of `bun run bench` instead (`GET /v1/classes` with a
 * publishable key, the bench studio, a browser's Accept-Encoding), where the recorders weigh more.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql } from '@studio/shared/io';
import { INSTRUCTORS_PATH, seedInstructors } from './instructors';
import { caseOptions } from './report';
import { seedStorefrontRead } from './seed';
import { createBenchStack } from './stack';
import { median } from './stats';
import { cpuLoadedAtOnce, warmGateway } from './wrk';

const { SECONDS, ROUNDS, SERVER_CPU, LOAD_CPU } = caseOptions({ seconds: 4, rounds: 6 });
const CONNECTIONS = 25;
const root = join(import.meta.dir, '../..');
const args = process.argv.slice(2);
const control = args.includes('--control');
const cached = args.includes('--cached');
const bEnvAt = args.indexOf('--b-env');
const bEnv = bEnvAt >= 0 ? (args[bEnvAt + 1] ?? '{}') : null;
// the first word that is not a flag, nor --b-env's value
const ref = args.find((a, i) => !a.startsWith('--') && (bEnvAt < 0 || i !== bEnvAt + 1)) ?? 'HEAD';

const git = (...args: string[]) => {
  const r = Bun.spawnSync(['git', ...args], { cwd: root, stdout: 'pipe', stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.toString().trim()}`);
};

/** B's checkout: the ref in a temporary worktree with its dependencies installed (or this tree, for --control). */
async function checkout(): Promise<{ dir: string; remove(): Promise<void> }> {
  if (control) return { dir: root, remove: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), 'studio-pair-'));
  git('worktree', 'add', '--detach', dir, ref);
  const installed = Bun.spawnSync(['bun', 'install', '--frozen-lockfile'], {
    cwd: dir,
    stdout: 'ignore',
    stderr: 'pipe',
  });
  if (installed.exitCode !== 0) throw new Error(`bun install in ${dir}: ${installed.stderr.toString().trim()}`);
  return {
    dir,
    async remove() {
      git('worktree', 'remove', '--force', dir);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The hop's read: 20 instructors and a secret key. */
async function seedHop(databaseUrl: string) {
  const { secret } = await seedInstructors(databaseUrl, 'Bench pair');
  return { key: secret.key, surface: 'management' as const };
}

/** `bun run bench`'s read: the bench studio and a publishable key. */
async function seedCached(databaseUrl: string) {
  const sql = createSql(databaseUrl, { max: 4 });
  try {
    const { key } = await seedStorefrontRead(sql);
    return { key, surface: 'storefront' as const };
  } finally {
    await sql.end();
  }
}

const b = await checkout();
const stack = await createBenchStack(SERVER_CPU).catch(async (err) => {
  await b.remove();
  throw err;
});
try {
  const { key, surface } = cached
    ? await seedCached(stack.config.DATABASE_URL)
    : await seedHop(stack.config.DATABASE_URL);
  await stack.start([surface === 'storefront' ? 'storefront-service' : 'management-service', 'gateway']);
  const extra = JSON.parse(bEnv ?? '{}') as Record<string, string>;
  const gatewayB = await stack.spawnGateway('gateway-b', join(b.dir, 'gateway/src/main.ts'), extra);
  const path = cached ? '/v1/classes' : INSTRUCTORS_PATH;
  const [urlA, urlB] =
    surface === 'storefront'
      ? [stack.config.STOREFRONT_PUBLIC_URL, gatewayB.storefrontUrl]
      : [stack.config.MANAGEMENT_PUBLIC_URL, gatewayB.managementUrl];
  const targets = [
    { url: urlA + path, pid: stack.pidOf('gateway') },
    { url: urlB + path, pid: gatewayB.child.pid },
  ];
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (cached) headers['accept-encoding'] = 'gzip, deflate, br';
  console.log(
    `${cached ? 'GET /v1/classes (cached), ' : ''}A: this working tree; B: ${control ? 'this working tree (control)' : ref}${bEnv ? ` with ${bEnv}` : ''}`,
  );
  // both compile under load first, so the first round does not count one's JIT against the other's
  await Promise.all(targets.map((t) => warmGateway(t.url, { connections: CONNECTIONS, cpu: LOAD_CPU, headers })));
  const ratios: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const [a, bCpu] = await cpuLoadedAtOnce(
      targets.map((t) => ({ ...t, headers })),
      { connections: CONNECTIONS, seconds: SECONDS, cpu: LOAD_CPU },
    );
    ratios.push(bCpu! / a!);
    console.log(
      `round ${i + 1}: A ${a!.toFixed(1)} µs, B ${bCpu!.toFixed(1)} µs of CPU a request; B/A ${(bCpu! / a!).toFixed(3)}`,
    );
  }
  console.log(
    `B/A median ${median(ratios).toFixed(3)} (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}): above 1, A spends less`,
  );
} finally {
  await stack.stop();
  await b.remove();
}
