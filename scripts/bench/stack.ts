/**
 * A throwaway stack for benchmarks: a fresh database, the three processes started
 * as in production (separate Bun processes), pinned to one core with taskset when
 * available so the load generator gets the other.
 */
import { join } from 'node:path';
import { loadConfig } from '@studio/shared';
import { migrate } from '../lib/migrate';
import { freePorts } from '../lib/ports';
import postgres from 'postgres';

export const root = join(import.meta.dir, '../..');
export const hasTaskset = Bun.which('taskset') !== null;
export const pin = (core: string, cmd: string[]) => (hasTaskset ? ['taskset', '-c', core, ...cmd] : cmd);

export interface BenchStack {
  env: Record<string, string>;
  config: ReturnType<typeof loadConfig>;
  stop(): Promise<void>;
}

async function waitReady(url: string) {
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`not ready: ${url}`);
}

export async function startBenchStack(serverCore = '0'): Promise<BenchStack> {
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const db = `studio_bench_${Date.now()}`;
  const u = new URL(base);
  u.pathname = `/${db}`;
  await migrate(u.href);
  const [a, b, c, d, e] = await freePorts(5);
  const ports = { STOREFRONT_PORT: a, MANAGEMENT_PORT: b, DASHBOARD_PORT: c, STOREFRONT_SERVICE_PORT: d, MANAGEMENT_SERVICE_PORT: e };
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: u.href,
    REDIS_PREFIX: `bench_${Date.now()}:`,
    STOREFRONT_SERVICE_URL: `http://127.0.0.1:${ports.STOREFRONT_SERVICE_PORT}`,
    MANAGEMENT_SERVICE_URL: `http://127.0.0.1:${ports.MANAGEMENT_SERVICE_PORT}`,
    STOREFRONT_PUBLIC_URL: `http://127.0.0.1:${ports.STOREFRONT_PORT}`,
    MANAGEMENT_PUBLIC_URL: `http://127.0.0.1:${ports.MANAGEMENT_PORT}`,
    DASHBOARD_PUBLIC_URL: `http://127.0.0.1:${ports.DASHBOARD_PORT}`,
    // measure the request path, not the limiter's refusals
    RATE_LIMIT_PUBLISHABLE_CLIENT: '1000000:1000000',
    RATE_LIMIT_PUBLISHABLE: '1000000:1000000',
    RATE_LIMIT_SECRET: '1000000:1000000',
    LOG_LEVEL: 'warn',
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  };
  const config = loadConfig(env);
  // BENCH_PROFILE_DIR=dir: the gateway writes a CPU profile (markdown) there when it stops
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof-md', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const procs = ['storefront-service/src/main.ts', 'management-service/src/main.ts', 'gateway/src/main.ts'].map((entry) =>
    Bun.spawn(pin(serverCore, ['bun', ...(entry.startsWith('gateway') ? profile : []), join(root, entry)]), { cwd: root, env, stdout: 'ignore', stderr: 'inherit' }),
  );
  await waitReady(`${env.STOREFRONT_SERVICE_URL}/readyz`);
  await waitReady(`${env.MANAGEMENT_SERVICE_URL}/readyz`);
  await waitReady(`${env.STOREFRONT_PUBLIC_URL}/readyz`);
  return {
    env,
    config,
    async stop() {
      for (const p of procs) p.kill('SIGTERM');
      await Promise.all(procs.map((p) => p.exited));
      const admin = postgres(base, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${db} with (force)`);
      await admin.end();
    },
  };
}
