#!/usr/bin/env bun
/**
 * The metrics lint `.ci/run` runs beside Biome (docs/design/observability.md): every process's `/metrics` through
 * Prometheus's `promtool check metrics`. It runs `bun run start` in single-node mode on a Postgres of its own (a
 * throwaway cluster: the machine's is never touched), makes the calls that give every metric family samples (reads,
 * a write and its replay, a webhook delivered, a dashboard page, an upstream timeout), then lints the gateway's and the
 * dashboard's operations ports and both services' ports. First it feeds promtool an exposition that must be refused,
 * so a promtool that lints nothing cannot pass the step. Prints one line per check; exits 1 when any fails.
 */
import { join } from 'node:path';
import { callWithKey, runAdmin, seedDemoExport } from '../lib/admin-run';
import { readUntil } from '../lib/output';
import { stackPorts } from '../lib/ports';
import { startThrowawayPostgres } from '../lib/throwaway-pg';

const root = join(import.meta.dir, '../..');

let failures = 0;
function check(name: string, ok: boolean, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` (${detail})` : ''}`);
  if (!ok) failures++;
}

const promtool = Bun.which('promtool');
if (!promtool) {
  console.log('FAIL promtool is not installed (apt-get install -y --no-install-recommends prometheus; .ci/run does)');
  process.exit(1);
}

/** `promtool check metrics` on an exposition: its complaints, or '' when it has none. */
async function lint(text: string): Promise<string> {
  const p = Bun.spawn([promtool!, 'check', 'metrics'], { stdin: new Blob([text]), stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return code === 0 && !out.trim() && !err.trim() ? '' : `exit ${code}: ${`${out}${err}`.trim()}`;
}

/** prom-client's GC histogram: Bun reports no GC to its observer, so it never has a sample, whatever runs. */
const NEVER_SAMPLED_ON_BUN = new Set(['nodejs_gc_duration_seconds']);

/** The families an exposition declares (`# TYPE`) that have no sample line. */
function familiesWithoutSamples(text: string): string[] {
  const families = [...text.matchAll(/^# TYPE (\S+) \S+$/gm)]
    .map((m) => m[1]!)
    .filter((f) => !NEVER_SAMPLED_ON_BUN.has(f));
  const sampled = new Set(text.split('\n').flatMap((l) => (l && !l.startsWith('#') ? [l.split(/[{ ]/)[0]!] : [])));
  const suffixes = ['', '_bucket', '_sum', '_count'];
  return families.filter((f) => !suffixes.some((s) => sampled.has(f + s)));
}

// a gauge named like a counter, and a label value never closed: a promtool that passes these lints nothing
const BROKEN = [
  '# HELP studio_broken_total A gauge may not end in _total.\n# TYPE studio_broken_total gauge\nstudio_broken_total 1\n',
  '# HELP studio_broken A line cut short.\n# TYPE studio_broken counter\nstudio_broken{outcome="new 1\n',
];
for (const text of BROKEN) {
  const said = await lint(text);
  check(`promtool refuses ${JSON.stringify(text.split('\n')[2])}`, said !== '', said.split('\n').at(-1));
}

const pg = await startThrowawayPostgres();
const { env: ports } = await stackPorts(true);
const env: Record<string, string> = { ...(process.env as Record<string, string>) };
for (const name of ['REDIS_CLUSTER_NODES', 'TEST_DATABASE_URL', 'TEST_REDIS_URL']) delete env[name];
Object.assign(env, ports, {
  HOST: '127.0.0.1',
  DATABASE_URL: pg.url,
  REDIS_URL: 'none', // single-node mode: the exposition is the same, and nothing shared is touched
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true', // the webhook receiver below is on loopback
  UPSTREAM_TIMEOUT_MS: '1000', // the upstream timeout below, without waiting the default 10 s
  LOG_LEVEL: 'warn',
});
const SF = ports.STOREFRONT_PUBLIC_URL!;
const MG = ports.MANAGEMENT_PUBLIC_URL!;
const expositions = {
  gateway: `http://127.0.0.1:${ports.OPS_PORT}/metrics`,
  dashboard: `http://127.0.0.1:${ports.DASHBOARD_OPS_PORT}/metrics`,
  'storefront-service': `${ports.STOREFRONT_SERVICE_URL}/metrics`,
  'management-service': `${ports.MANAGEMENT_SERVICE_URL}/metrics`,
};

const call = callWithKey;
async function until(what: string, ok: () => Promise<boolean>, ms = 15_000) {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await Bun.sleep(100)) if (await ok()) return;
  throw new Error(`${what}: not within ${ms / 1000} s`);
}

const receiver = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') });
const stack = Bun.spawn(['bun', 'run', '--silent', 'start'], { cwd: root, env, stdout: 'pipe', stderr: 'inherit' });
const reader = (stack.stdout as ReadableStream<Uint8Array>).getReader();
try {
  const banner = await readUntil(reader, 'Press Ctrl-C to stop.', 90_000);
  void (async () => {
    while (!(await reader.read()).done); // keep draining, so the stack never blocks on a full pipe
  })();
  if (!banner.includes('Studio API is running')) throw new Error(`bun run start did not come up:\n${banner}`);
  const pidOf = (name: string) => Number(banner.match(new RegExp(`"process":"${name}","pid":(\\d+)`))?.[1]);

  const { studio, sk, pk, testSk, ...seeded } = await seedDemoExport(env);
  if (seeded.code !== 0 || !sk || !pk || !testSk) throw new Error(`seed:demo --export: ${seeded.err}`);
  const hook = await runAdmin(
    env,
    'webhook:create',
    '--studio',
    studio,
    '--url',
    `http://127.0.0.1:${receiver.port}/hook`,
  );
  if (hook.code !== 0) throw new Error(`webhook:create: ${hook.err}`);

  await call(`${SF}/v1/classes`, pk);
  await call(`${SF}/v1/classes`, pk); // cached
  await call(`${MG}/v1/instructors`, sk);
  await call(`${MG}/v1/instructors`, testSk); // a test key's call (studio_test_mode_requests_total)
  const write = {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ name: 'Ana Ruiz', disciplines: ['pilates'] }),
  };
  await call(`${MG}/v1/instructors`, sk, write);
  await call(`${MG}/v1/instructors`, sk, write); // replayed
  await fetch(`${ports.DASHBOARD_PUBLIC_URL}/sign-in`);
  // an upstream timeout: storefront-service stopped (not killed: `bun run start` would start another) for one call
  const storefrontService = pidOf('storefront-service');
  process.kill(storefrontService, 'SIGSTOP');
  const timedOut = await call(`${SF}/v1/instructors`, pk).finally(() => process.kill(storefrontService, 'SIGCONT'));
  check(
    'a call to a stopped service is answered 504 or 503',
    [503, 504].includes(timedOut.status),
    `${timedOut.status}`,
  );
  await until('a webhook delivered', async () =>
    (await (await fetch(expositions['management-service'])).text()).includes('studio_webhook_deliveries_total{'),
  );

  for (const [name, url] of Object.entries(expositions)) {
    const text = await (await fetch(url)).text();
    const empty = familiesWithoutSamples(text);
    const families = text.match(/^# TYPE /gm)?.length ?? 0;
    check(
      `${name}: every metric family has samples`,
      empty.length === 0,
      empty.length ? `none in ${empty.join(', ')}` : `${families} families`,
    );
    const said = await lint(text);
    check(`${name}: promtool check metrics ${url}`, said === '', said);
  }
} catch (err) {
  check('the metrics lint run', false, String(err));
} finally {
  stack.kill('SIGINT');
  await Promise.race([stack.exited, Bun.sleep(30_000)]);
  if (stack.exitCode === null) stack.kill('SIGKILL');
  receiver.stop(true);
  await pg.destroy();
}
console.log(failures ? `${failures} check(s) failed` : 'metrics lint: every exposition passes promtool check metrics');
process.exit(failures ? 1 : 0);
