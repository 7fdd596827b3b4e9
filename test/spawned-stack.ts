/**
 * The four processes of a stack as production runs them, each from its own `main.ts` on free ports, sharing a test
 * stack's database and Redis; their stdout and stderr collected as they come. `extraEnv` is added to each one's
 * environment (the OpenTelemetry SDK's variables, for one).
 */
import { join } from 'node:path';
import { stackPorts } from '../scripts/lib/ports';
import { makeRoomForAGateway, type Stack } from './harness';

const root = join(import.meta.dir, '..');

export interface SpawnedProcess {
  name: string;
  proc: ReturnType<typeof Bun.spawn>;
  out: { text: string };
  err: { text: string };
}

/** A stream's text, collected as it comes. */
export function collect(stream: ReadableStream<Uint8Array>) {
  const into = { text: '' };
  void (async () => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) into.text += decoder.decode(r.value);
  })();
  return into;
}

/** One process from its main.ts, its stdout and stderr collected. */
function spawn(name: string, entry: string, env: Record<string, string>): SpawnedProcess {
  const proc = Bun.spawn(['bun', join(root, entry)], { cwd: root, env, stdout: 'pipe', stderr: 'pipe' });
  return {
    name,
    proc,
    out: collect(proc.stdout as ReadableStream<Uint8Array>),
    err: collect(proc.stderr as ReadableStream<Uint8Array>),
  };
}

/** Waits for `url`'s `/readyz` to answer 200 (at most 10 s). */
export async function ready(url: string) {
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await Bun.sleep(50);
  }
  throw new Error(`${url} never became ready`);
}

export async function spawnStack(s: Stack, extraEnv: Record<string, string> = {}) {
  await makeRoomForAGateway(s);
  const { port, env: ports } = await stackPorts(true);
  const urls = {
    storefront: ports.STOREFRONT_PUBLIC_URL!,
    management: ports.MANAGEMENT_PUBLIC_URL!,
    dashboard: ports.DASHBOARD_PUBLIC_URL!,
    ops: `http://127.0.0.1:${port.ops}`,
    dashboardOps: `http://127.0.0.1:${port.dashboardOps}`,
  };
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATABASE_URL: s.config.DATABASE_URL,
    REDIS_URL: s.config.REDIS_URL,
    REDIS_PREFIX: s.config.REDIS_PREFIX,
    GATEWAY_SECRET: s.config.GATEWAY_SECRET,
    DASHBOARD_SECRET: s.config.DASHBOARD_SECRET,
    CURSOR_SECRET: s.config.CURSOR_SECRET,
    ...ports,
    ...extraEnv,
  };
  const procs = [
    spawn('storefront-service', 'storefront-service/src/main.ts', env),
    spawn('management-service', 'management-service/src/main.ts', env),
    spawn('gateway', 'gateway/src/main.ts', env),
    spawn('dashboard', 'dashboard/src/main.ts', env),
  ];
  const stop = async () => {
    for (const p of procs) p.proc.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.proc.exited));
  };
  try {
    await Promise.all([
      ready(ports.STOREFRONT_SERVICE_URL!),
      ready(ports.MANAGEMENT_SERVICE_URL!),
      ready(urls.ops),
      ready(urls.dashboardOps),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    procs,
    urls,
    /** SIGTERM to each, and their exits waited for (each drains: its last access lines and spans go out). */
    stop,
  };
}
export type SpawnedStack = Awaited<ReturnType<typeof spawnStack>>;
