#!/usr/bin/env bun
/**
 * The README's first command on a machine with nothing but Bun (issue 23; docs/design/single-node.md).
 * `.ci/run` runs this inside a network namespace where only loopback exists and nothing listens:
 * `bun run start` must come up on the embedded Postgres in single-node mode, and then a newcomer's
 * first steps must work: seed:demo, both surfaces, the secret key's limit, a CLI revoke refused by
 * the next call, data kept across a restart, and a second gateway refused with a message naming REDIS_URL.
 * Prints one line per check; exits 1 when any fails.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_ENV } from '@studio/shared';
import { callWithKey, runAdmin, seedDemoExport } from '../lib/admin-run';
import { readUntil } from '../lib/output';

const root = join(import.meta.dir, '../..');
const env: Record<string, string> = { ...(process.env as Record<string, string>) };
for (const name of ['DATABASE_URL', 'REDIS_URL', 'REDIS_CLUSTER_NODES', 'TEST_DATABASE_URL', 'TEST_REDIS_URL'])
  delete env[name];
const SF = 'http://127.0.0.1:48004';
const MG = 'http://127.0.0.1:48005';

let failures = 0;
function check(name: string, ok: boolean, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` (${detail})` : ''}`);
  if (!ok) failures++;
}

/** `bun run start`, its output read until `until` (by default the banner's last line) or `timeoutMs`. */
async function start(
  until = 'Press Ctrl-C to stop.',
  timeoutMs = 90_000,
): Promise<{ proc: ReturnType<typeof Bun.spawn>; banner: string; seconds: number }> {
  const began = performance.now();
  const proc = Bun.spawn(['bun', 'run', 'start'], { cwd: root, env, stdout: 'pipe', stderr: 'inherit' });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const out = await readUntil(reader, until, timeoutMs);
  // keep draining, so the child never blocks on a full pipe
  void (async () => {
    while (!(await reader.read()).done);
  })();
  return { proc, banner: out, seconds: (performance.now() - began) / 1000 };
}

/**
 * The five processes `bun run start` named in its log (`process started`: the gateway, the dashboard, both
 * services and the MCP server) each have RUNTIME_ENV in their environment.
 */
function runsWithRuntimeEnv(banner: string): boolean {
  const pids = [...banner.matchAll(/"msg":"process started".*?"pid":(\d+)/g)].map((m) => m[1]!);
  const wanted = Object.entries(RUNTIME_ENV).map(([k, v]) => `${k}=${v}`);
  return (
    pids.length === 5 &&
    pids.every((pid) => {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      return wanted.every((w) => environ.includes(w));
    })
  );
}

async function stop(proc: ReturnType<typeof Bun.spawn>) {
  proc.kill('SIGINT');
  await Promise.race([proc.exited, Bun.sleep(30_000)]);
  if (proc.exitCode === null) proc.kill('SIGKILL');
}

const admin = (...args: string[]) => runAdmin(env, ...args);
const call = callWithKey;

let run = await start();
check(
  'bun run start comes up',
  run.banner.includes('Studio API is running'),
  `${run.seconds.toFixed(1)} s to the banner`,
);
check('on an embedded Postgres', /embedded PostgreSQL/.test(run.banner));
check('in single-node mode', /single-node mode/.test(run.banner));
check('every process runs with the runtime settings', runsWithRuntimeEnv(run.banner));
if (!run.banner.includes('Studio API is running')) {
  console.log(run.banner);
  await stop(run.proc);
  process.exit(1);
}

try {
  const { studio, sk, pk, ...seeded } = await seedDemoExport(env);
  check('seed:demo --export', seeded.code === 0 && !!sk && !!pk, seeded.err.trim());

  const classes = await call(`${SF}/v1/classes`, pk);
  check('a Storefront read', classes.status === 200, String(classes.status));

  const created = await call(`${MG}/v1/instructors`, sk, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ name: 'Ana Ruiz', disciplines: ['pilates'] }),
  });
  const instructor = (await created.json()) as { id?: string };
  check('a Management create', created.status === 201 && !!instructor.id, String(created.status));

  // the demo's secret key is limited 100:200 (RATE_LIMIT_SECRET): 600 concurrent calls cannot all pass
  await Bun.sleep(2_500); // the bucket refills after the calls above
  const began = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: 600 }, () => call(`${MG}/v1/instructors?limit=1`, sk).then((r) => r.status)),
  );
  const seconds = (performance.now() - began) / 1000;
  const admitted = statuses.filter((s) => s === 200).length;
  const limited = statuses.filter((s) => s === 429).length;
  check(
    '600 concurrent calls on a 100:200 key: the rest are 429',
    admitted + limited === 600 && limited > 0 && admitted <= 200 + Math.ceil(100 * seconds) + 1,
    `${admitted} admitted, ${limited} refused in ${seconds.toFixed(2)} s`,
  );

  const made = await admin(
    'key:create',
    '--studio',
    studio,
    '--kind',
    'secret',
    '--name',
    'smoke',
    '--scopes',
    'instructors:read',
  );
  const key = JSON.parse(made.out || '{}') as { key?: string; record?: { id: string } };
  const before = await call(`${MG}/v1/instructors?limit=1`, key.key ?? '');
  const revoked = await admin('key:revoke', '--key', key.record?.id ?? '');
  const after = await call(`${MG}/v1/instructors?limit=1`, key.key ?? '');
  check(
    'a key revoked with the CLI is refused by the next call',
    before.status === 200 && revoked.code === 0 && after.status === 401,
    `${before.status} then ${after.status}${revoked.err ? `; ${revoked.err.trim()}` : ''}`,
  );

  const second = Bun.spawn(['bun', 'gateway/src/main.ts'], {
    cwd: root,
    env: {
      ...env,
      REDIS_URL: 'none',
      STOREFRONT_PORT: '49004',
      MANAGEMENT_PORT: '49005',
      DASHBOARD_PORT: '49006',
      OPS_PORT: '49007',
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const exited = await Promise.race([second.exited, Bun.sleep(20_000).then(() => null)]);
  const said =
    (await new Response(second.stderr).text()) + (exited === null ? '' : await new Response(second.stdout).text());
  if (exited === null) second.kill('SIGKILL');
  check(
    'a second gateway refuses to start, naming REDIS_URL',
    exited !== null && exited !== 0 && said.includes('REDIS_URL'),
    said.trim().split('\n').at(-1),
  );

  await stop(run.proc);
  run = await start();
  check(
    'bun run start again',
    run.banner.includes('Studio API is running'),
    `${run.seconds.toFixed(1)} s to the banner`,
  );
  const kept = await call(`${MG}/v1/instructors/${instructor.id}`, sk);
  check('the data survives the restart', kept.status === 200, String(kept.status));
} catch (err) {
  check('the smoke run', false, String(err));
} finally {
  await stop(run.proc);
}

// Ctrl-C while the stack comes up (here as soon as the embedded Postgres answers, before the migrations): start stops
// it too, though the signal never reaches it (it runs in a session of its own)
{
  const { proc: early } = await start('embedded Postgres started', 60_000);
  early.kill('SIGINT');
  const code = await Promise.race([early.exited, Bun.sleep(30_000).then(() => null)]);
  if (code === null) early.kill('SIGKILL');
  const pidFile = join(root, '.data/postgres/postmaster.pid');
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : 0;
  const alive =
    pid > 0 &&
    (() => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    })();
  if (alive) process.kill(pid, 'SIGINT'); // leave the machine as found
  check(
    'Ctrl-C while the stack comes up leaves no Postgres running',
    code === 0 && !alive,
    `exit ${code}, Postgres ${alive ? `still running (pid ${pid})` : 'stopped'}`,
  );
}
console.log(failures ? `${failures} check(s) failed` : 'single-node smoke: all checks passed');
process.exit(failures ? 1 : 0);
