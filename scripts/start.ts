#!/usr/bin/env bun
/**
 * `bun run start`: migrations, then the three processes (gateway, storefront-service,
 * management-service), each on its own as in production; prints the URLs once all
 * are ready, restarts a child that dies, and stops them all on Ctrl-C.
 */
import { loadConfigOrExit } from '@studio/shared';
import { join } from 'node:path';
import { migrate } from './lib/migrate';

const root = join(import.meta.dir, '..');
const config = loadConfigOrExit(); // refuses development secrets beyond loopback before any child starts

try {
  const applied = await migrate(config.DATABASE_URL);
  console.log(applied.length ? `migrations applied: ${applied.join(', ')}` : 'migrations: up to date');
} catch (err) {
  console.error(`error: cannot migrate ${config.DATABASE_URL.replace(/\/\/[^@/]*@/, '//…@')}: ${(err as Error).message}`);
  console.error('Is Postgres running? See README "Requirements".');
  process.exit(1);
}

const processes = [
  { name: 'storefront-service', entry: 'storefront-service/src/main.ts', health: `http://${config.HOST}:${config.STOREFRONT_SERVICE_PORT}/readyz` },
  { name: 'management-service', entry: 'management-service/src/main.ts', health: `http://${config.HOST}:${config.MANAGEMENT_SERVICE_PORT}/readyz` },
  { name: 'gateway', entry: 'gateway/src/main.ts', health: `http://${config.HOST}:${config.STOREFRONT_PORT}/readyz` },
];

/**
 * Each child runs on its own, as in production; one that dies is started again after a
 * backoff (0.5 s, doubling to 30 s; reset once it has stayed up a minute), as a container
 * restart policy would, instead of taking the stack down.
 */
const children = new Map<string, ReturnType<typeof Bun.spawn>>();
let stopping = false;
function run(p: (typeof processes)[number], failures = 0) {
  const child = Bun.spawn(['bun', join(root, p.entry)], { cwd: root, env: process.env, stdout: 'inherit', stderr: 'inherit' });
  children.set(p.name, child);
  console.log(JSON.stringify({ level: 'info', msg: 'process started', process: p.name, pid: child.pid }));
  const started = Date.now();
  void child.exited.then((code) => {
    if (stopping) return;
    const streak = Date.now() - started > 60_000 ? 0 : failures;
    const delay = Math.min(30_000, 500 * 2 ** streak);
    console.error(JSON.stringify({ level: 'warn', msg: 'process exited; restarting', process: p.name, code, restartInMs: delay }));
    setTimeout(() => stopping || run(p, streak + 1), delay);
  });
}
processes.forEach((p) => run(p));

function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  for (const c of children.values()) c.kill('SIGTERM');
  Promise.all([...children.values()].map((c) => c.exited)).then(() => process.exit(code));
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

async function ready(url: string) {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).ok) return true;
    } catch {}
    await Bun.sleep(100);
  }
  return false;
}
const ok = await Promise.all(processes.map((p) => ready(p.health)));
if (!ok.every(Boolean)) {
  console.error(`not ready: ${processes.filter((_, i) => !ok[i]).map((p) => p.name).join(', ')} (is Redis running?)`);
  stopAll(1);
} else {
  console.log(`
Studio API is running:
  Storefront  ${config.STOREFRONT_PUBLIC_URL}/v1   (publishable keys; docs at ${config.STOREFRONT_PUBLIC_URL}/docs)
  Management  ${config.MANAGEMENT_PUBLIC_URL}/v1   (secret keys; docs at ${config.MANAGEMENT_PUBLIC_URL}/docs)
  Dashboard   ${config.DASHBOARD_PUBLIC_URL}      (sign in with: bun run admin login-link --studio <id>)
  Operations  http://${config.HOST}:${config.OPS_PORT}/metrics   (gateway metrics; each service's at its own port /metrics)
Press Ctrl-C to stop.`);
}
