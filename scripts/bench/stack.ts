/**
 * A throwaway stack for benchmarks: a fresh database and Redis namespace, free ports,
 * and the services started as in production (separate Bun processes) on the server
 * core, so the load generator gets the other. `stop` removes everything it made.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig, RUNTIME_ENV, randomBase62 } from '@studio/shared';
import postgres from 'postgres';
import { createClient } from 'redis';
import { migrate } from '../lib/migrate';
import { freePorts, stackPorts } from '../lib/ports';
import { caseFlags } from './report';

export const root = join(import.meta.dir, '../..');

const ENTRIES = {
  'storefront-service': 'storefront-service/src/main.ts',
  'management-service': 'management-service/src/main.ts',
  gateway: 'gateway/src/main.ts',
  mcp: 'mcp/src/main.ts',
} as const;
export type BenchProcess = keyof typeof ENTRIES;

export async function waitFor(url: string) {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).ok) return;
    } catch {}
    await Bun.sleep(50);
  }
  throw new Error(`not ready: ${url}`);
}

/** The processes' environment on free ports: this process's own, the bench's database and Redis prefix, lifted limits. */
export async function benchEnv(dbUrl: string, overrides: Record<string, string> = {}): Promise<Record<string, string>> {
  const { env: ports } = await stackPorts(true);
  return {
    // production's runtime settings (shared/src/runtime.ts), unless the environment names its own
    ...RUNTIME_ENV,
    ...(process.env as Record<string, string>),
    DATABASE_URL: dbUrl,
    REDIS_PREFIX: `bench_${randomBase62(8)}:`,
    ...ports,
    // One load generator is one client address: lift the limits so a bench measures serving, not 429s
    // (the limiter still runs; it leases tokens from Redis).
    RATE_LIMIT_PUBLISHABLE_CLIENT: '1000000:1000000',
    RATE_LIMIT_PUBLISHABLE: '1000000:1000000',
    RATE_LIMIT_SECRET: '1000000:1000000',
    // production's level: an access line per request (a diagnosis run passes its own in `overrides`)
    LOG_LEVEL: 'info',
    ...overrides,
  };
}

/** Drops the bench's database and its Redis keys (what `stop` leaves behind otherwise). */
async function dropBenchData(serverUrl: string, dbName: string, config: Config) {
  const admin = postgres(Object.assign(new URL(serverUrl), { pathname: '/postgres' }).href, {
    max: 1,
    onnotice: () => {},
  });
  await admin
    .unsafe(`drop database if exists ${dbName} with (force)`)
    .catch((e) => console.error(`cleanup: ${e.message}`));
  await admin.end();
  if (config.REDIS_URL === 'none') return; // single-node: no Redis keys
  const redis = createClient({ url: config.REDIS_URL });
  try {
    await redis.connect();
    for await (const keys of redis.scanIterator({ MATCH: `${config.REDIS_PREFIX}*`, COUNT: 1000 }))
      if (keys.length) await redis.del(keys);
    await redis.quit();
  } catch {}
}

/**
 * `bun run bench --profile dir`: Bun's flags that make a process write its CPU profile there when it stops, as
 * samples (`bun run bench:profile` counts them) and as markdown: the gateway's in `dir`, another process's (a service,
 * the hop's Bun floor) in `folder` under it, named after it. None without the flag.
 */
export const profiled = (folder = '') =>
  caseFlags.profile ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${join(caseFlags.profile, folder)}`] : [];

/** `server`: the Postgres server to create the database on (default: DATABASE_URL's). */
export async function createBenchStack(serverCpu = '0', overrides: Record<string, string> = {}, server?: string) {
  const base = loadConfig(server ? { ...process.env, DATABASE_URL: server } : process.env);
  const dbName = `studio_bench_${randomBase62(8).toLowerCase()}`;
  const dbUrl = Object.assign(new URL(base.DATABASE_URL), { pathname: `/${dbName}` }).href;
  await migrate(dbUrl);
  const env = await benchEnv(dbUrl, overrides);
  const config = loadConfig(env);
  const logDir = await mkdtemp(join(tmpdir(), 'studio-bench-logs-'));
  const children: ReturnType<typeof Bun.spawn>[] = [];
  const byName = new Map<string, ReturnType<typeof Bun.spawn>>();
  /** A process on the server core, stopped with the stack (`extraEnv`: e.g. a second replica's ports). */
  function spawn(name: string, args: string[], extraEnv: Record<string, string> = {}) {
    const child = Bun.spawn(['taskset', '-c', serverCpu, ...args], {
      cwd: root,
      env: { ...env, ...extraEnv },
      // lines go to a file, as a log collector would read them (not /dev/null, which costs nothing)
      stdout: Bun.file(join(logDir, `${name}.log`)),
      stderr: 'inherit',
    });
    children.push(child);
    byName.set(name, child);
    return child;
  }

  async function stopChild(child: ReturnType<typeof Bun.spawn>) {
    child.kill('SIGTERM');
    await Promise.race([child.exited, Bun.sleep(5_000).then(() => child.kill('SIGKILL'))]);
  }

  return {
    env,
    config,
    dbName,
    spawn,
    /**
     * One more gateway on free ports, from `entry` (another checkout's, to compare code), started
     * and ready; `managementUrl` and `storefrontUrl` are its two API surfaces.
     */
    async spawnGateway(name: string, entry = join(root, ENTRIES.gateway), extraEnv: Record<string, string> = {}) {
      const [sf, mg, dash, ops] = (await freePorts(4)) as [number, number, number, number];
      const ports = {
        STOREFRONT_PORT: `${sf}`,
        MANAGEMENT_PORT: `${mg}`,
        DASHBOARD_PORT: `${dash}`,
        OPS_PORT: `${ops}`,
      };
      const child = spawn(name, ['bun', entry], { ...ports, ...extraEnv });
      await waitFor(`http://127.0.0.1:${sf}/readyz`);
      return { child, managementUrl: `http://127.0.0.1:${mg}`, storefrontUrl: `http://127.0.0.1:${sf}` };
    },
    /** The processes started so far (a chaos run checks that none died). */
    children: () => [...children],
    /** The process last started under this name (`taskset` execs, so it is the server's own). */
    pidOf: (name: string) => byName.get(name)!.pid,
    stopChild,
    /** Starts these processes and waits until each is ready. */
    async start(names: BenchProcess[] = ['storefront-service', 'management-service', 'gateway']) {
      for (const name of names)
        spawn(name, ['bun', ...profiled(name === 'gateway' ? '' : name), join(root, ENTRIES[name])]);
      const ready: Record<BenchProcess, string> = {
        'storefront-service': `${env.STOREFRONT_SERVICE_URL}/readyz`,
        'management-service': `${env.MANAGEMENT_SERVICE_URL}/readyz`,
        gateway: `${env.STOREFRONT_PUBLIC_URL}/readyz`,
        mcp: `http://127.0.0.1:${env.MCP_PORT}/readyz`,
      };
      for (const name of names) await waitFor(ready[name]);
    },
    async stop() {
      await Promise.all(children.map(stopChild));
      await rm(logDir, { recursive: true, force: true });
      await dropBenchData(base.DATABASE_URL, dbName, config);
    },
  };
}
