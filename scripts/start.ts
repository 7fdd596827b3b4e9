#!/usr/bin/env bun
import { join, relative } from 'node:path';
/**
 * `bun run start`: the database (docs/design/single-node.md: DATABASE_URL, else Postgres on 127.0.0.1:5432, else an
 * embedded Postgres it starts), migrations, then the five processes (gateway, dashboard,
 * storefront-service, management-service, and the MCP server), each on its own as in production, all given the
 * same DATABASE_URL; prints the URLs once all are ready, restarts a child that dies, and on
 * Ctrl-C stops them (the gateway and the dashboard first, then the services), then the embedded Postgres.
 */
import {
  answers,
  LOCAL_DATABASE_URL,
  loadConfigOrExit,
  RUNTIME_ENV,
  redisMode,
  resolveDatabase,
  SINGLE_NODE,
} from '@studio/shared';
import { type EmbeddedPostgres, startEmbeddedPostgres, superviseEmbeddedPostgres } from './lib/embedded-pg';
import { migrate } from './lib/migrate';
import { restartAfter } from './lib/restart';

const began = performance.now();
const root = join(import.meta.dir, '..');
// Ctrl-C, SIGTERM or the terminal closing before the stack is up: noted, and acted on once the step under way ends
// (the embedded Postgres runs in a session of its own, so the signal does not reach it: dying here would leave it
// running, and the next start refused); once the children run, `stopAll`
let interrupted = false;
let onSignal: () => void = () => {
  interrupted = true;
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => onSignal());
/** Stops what started so far and exits, when a signal came during the steps before the children. */
async function exitIfInterrupted() {
  if (!interrupted) return;
  console.log(JSON.stringify({ level: 'info', msg: 'stopped before the stack was up' }));
  await embedded?.stop();
  process.exit(0);
}
const database = resolveDatabase(process.env);
// the mode, decided once for every child (docs/design/single-node.md): no Redis named and none on 127.0.0.1:6379 is single-node mode
if (!process.env.REDIS_URL && !process.env.REDIS_CLUSTER_NODES && !answers('127.0.0.1', 6379))
  process.env.REDIS_URL = SINGLE_NODE;
// the gateway reaches the services where this starts them, and the banner, the login links and the documents name the
// gateway's ports where this starts it: on their ports, unless their URLs are named (a port moved off a taken one, as
// the error below advises, is followed; the default URLs would name the old port)
const host = process.env.HOST;
/** The address this machine reaches the processes at (an IPv6 one in brackets, as a URL needs it). */
const reach = !host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
for (const [url, port] of [
  ['STOREFRONT_SERVICE_URL', 'STOREFRONT_SERVICE_PORT'],
  ['MANAGEMENT_SERVICE_URL', 'MANAGEMENT_SERVICE_PORT'],
  ['STOREFRONT_PUBLIC_URL', 'STOREFRONT_PORT'],
  ['MANAGEMENT_PUBLIC_URL', 'MANAGEMENT_PORT'],
  ['DASHBOARD_PUBLIC_URL', 'DASHBOARD_PORT'],
] as const)
  if (!process.env[url] && process.env[port]) process.env[url] = `http://${reach}:${process.env[port]}`;
// the MCP server calls the gateway from this address and forwards its agents' in X-Forwarded-For: the gateway believes
// it, so per-address limits and the activity log's address stay the agent's (docs/design/mcp.md)
const mcpAddress = reach.replace(/^\[|\]$/g, '');
const trusted = (process.env.TRUSTED_PROXIES ?? '')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
if (/^[\d.]+$|:/.test(mcpAddress) && !trusted.includes(mcpAddress))
  process.env.TRUSTED_PROXIES = [...trusted, mcpAddress].join(',');
// refuses development secrets beyond loopback before anything starts (the embedded Postgres included)
const early = loadConfigOrExit({ ...process.env, DATABASE_URL: database.url ?? LOCAL_DATABASE_URL });
// a port already taken (most often a stack started before, in another terminal): said before anything starts
const PORTS = [
  'STOREFRONT_PORT',
  'MANAGEMENT_PORT',
  'DASHBOARD_PORT',
  'OPS_PORT',
  'DASHBOARD_OPS_PORT',
  'STOREFRONT_SERVICE_PORT',
  'MANAGEMENT_SERVICE_PORT',
  'MCP_PORT',
] as const;
const taken = PORTS.filter((v) => answers(early.HOST, early[v]));
if (taken.length) {
  console.error(
    `error: ${taken.map((v) => `port ${early[v]} (${v})`).join(', ')} ${taken.length > 1 ? 'are' : 'is'} in use by another process. ` +
      'Is the stack already running in another terminal? Stop it, or set the variables named to free ports.',
  );
  process.exit(1);
}

const shown = (path: string) => (relative(process.cwd(), path).startsWith('..') ? path : relative(process.cwd(), path));
const masked = (url: string) => url.replace(/\/\/([^@/:]*):[^@/]*@/, '//$1:…@');
let embedded: EmbeddedPostgres | null = null;
if (database.source === 'embedded') {
  try {
    embedded = await startEmbeddedPostgres({
      dataDir: database.dataDir,
      stateFile: database.stateFile,
      log: (msg) => console.log(JSON.stringify({ level: 'info', msg })),
    });
  } catch (err) {
    console.error(
      `error: cannot start the embedded Postgres (data in ${shown(database.dataDir)}): ${(err as Error).message}`,
    );
    console.error('Or use a Postgres of your own: set DATABASE_URL (docs/operations.md, "The database").');
    process.exit(1);
  }
  console.log(
    JSON.stringify({
      level: 'info',
      msg: 'embedded Postgres started',
      dataDir: embedded.dataDir,
      port: embedded.port,
      runsAs: embedded.user,
      initialised: embedded.initialised,
    }),
  );
  process.env.DATABASE_URL = embedded.url;
  await exitIfInterrupted();
} else {
  process.env.DATABASE_URL = database.url; // every child uses what was resolved here, without resolving again
}
const config = loadConfigOrExit();

try {
  const applied = await migrate(config.DATABASE_URL);
  console.log(applied.length ? `migrations applied: ${applied.join(', ')}` : 'migrations: up to date');
} catch (err) {
  console.error(`error: cannot migrate ${masked(config.DATABASE_URL)}: ${(err as Error).message}`);
  if (!embedded) console.error('Is Postgres running? See README "Quickstart".');
  await embedded?.stop();
  process.exit(1);
}
await exitIfInterrupted();

const processes = [
  {
    name: 'storefront-service',
    entry: 'storefront-service/src/main.ts',
    health: `http://${reach}:${config.STOREFRONT_SERVICE_PORT}/readyz`,
  },
  {
    name: 'management-service',
    entry: 'management-service/src/main.ts',
    health: `http://${reach}:${config.MANAGEMENT_SERVICE_PORT}/readyz`,
  },
  { name: 'gateway', entry: 'gateway/src/main.ts', health: `http://${reach}:${config.STOREFRONT_PORT}/readyz` },
  { name: 'dashboard', entry: 'dashboard/src/main.ts', health: `http://${reach}:${config.DASHBOARD_OPS_PORT}/readyz` },
  { name: 'mcp', entry: 'mcp/src/main.ts', health: `http://${reach}:${config.MCP_PORT}/readyz` },
];

/**
 * Each child runs on its own, as in production; one that dies is started again after a
 * backoff (0.5 s, doubling to 30 s; reset once it has stayed up a minute), as a container
 * restart policy would, instead of taking the stack down.
 */
const children = new Map<string, ReturnType<typeof Bun.spawn>>();
let stopping = false;
function run(p: (typeof processes)[number], failures = 0) {
  const child = Bun.spawn(['bun', join(root, p.entry)], {
    cwd: root,
    env: { ...RUNTIME_ENV, ...process.env },
    stdout: 'inherit',
    stderr: 'inherit',
    // a session of its own: the terminal's Ctrl-C (or hang-up) reaches this process alone, and `stopAll` stops the
    // children in order; from the terminal's signal, the services would drain while the gateway still forwards to them
    detached: true,
  });
  children.set(p.name, child);
  console.log(JSON.stringify({ level: 'info', msg: 'process started', process: p.name, pid: child.pid }));
  const started = Date.now();
  void child.exited.then((code) => {
    if (stopping) return;
    const { streak, delayMs: delay } = restartAfter(started, failures);
    console.error(
      JSON.stringify({ level: 'warn', msg: 'process exited; restarting', process: p.name, code, restartInMs: delay }),
    );
    setTimeout(() => stopping || run(p, streak + 1), delay);
  });
}
processes.forEach((p) => run(p));

/** SIGTERM to the named children, resolved once each has exited (and said so). */
function stopChildren(names: string[]): Promise<unknown> {
  return Promise.all(
    names.map((name) => {
      const child = children.get(name);
      if (!child) return;
      child.kill('SIGTERM');
      return child.exited.then((code) =>
        console.log(JSON.stringify({ level: 'info', msg: 'process stopped', process: name, code })),
      );
    }),
  );
}

/**
 * Stops the stack in the order a deployment drains: the gateway, the dashboard and the MCP server first (the gateway finishes its
 * in-flight calls, which still need the services, and flushes its activity; the dashboard its pages), then the
 * services, then the database their last writes need.
 */
function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  stopChildren(['gateway', 'dashboard', 'mcp'])
    .then(() => stopChildren(['storefront-service', 'management-service']))
    .then(() => embedded?.stop())
    .then(() => process.exit(code));
}
// however this process ends (an uncaught error included), no child is left running in its session of its own
process.on('exit', () => {
  for (const c of children.values()) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
});
// the terminal closed (SIGHUP) is the same as Ctrl-C: the embedded Postgres, in a session of its own, would outlive us
onSignal = () => stopAll(0);
// the embedded Postgres is ours to watch, as the children are: one that dies is said loudly and started again on its
// data (the children answer 503 meanwhile, and reconnect); one that cannot start again stops the stack, saying why
if (embedded) {
  const logFile = shown(embedded.logFile);
  superviseEmbeddedPostgres(embedded, {
    stopping: () => stopping,
    onExited: (code, restartInMs) =>
      console.error(
        JSON.stringify({ level: 'warn', msg: 'embedded Postgres exited; restarting', code, restartInMs, log: logFile }),
      ),
    onRestarted: (pg) => {
      embedded = pg;
      console.log(JSON.stringify({ level: 'info', msg: 'embedded Postgres started again', port: pg.port }));
    },
    onFailed: (err) => {
      console.error(`error: the embedded Postgres cannot start again: ${err.message} (its log: ${logFile})`);
      stopAll(1);
    },
  });
}

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
  const hint =
    redisMode(config) === 'single-node'
      ? 'see the lines above; in single-node mode, does another gateway run against this database?'
      : 'see the lines above; is Redis running?';
  console.error(
    `not ready: ${processes
      .filter((_, i) => !ok[i])
      .map((p) => p.name)
      .join(', ')} (${hint})`,
  );
  stopAll(1);
} else {
  const db = embedded
    ? `embedded PostgreSQL, started by this command; data in ${shown(embedded.dataDir)} (its URL in ${shown(embedded.stateFile)})`
    : masked(config.DATABASE_URL);
  console.log(`
Studio API is running (ready in ${((performance.now() - began) / 1000).toFixed(1)} s):
  Storefront  ${config.STOREFRONT_PUBLIC_URL}/v1   (publishable keys; docs at ${config.STOREFRONT_PUBLIC_URL}/docs)
  Management  ${config.MANAGEMENT_PUBLIC_URL}/v1   (secret keys; docs at ${config.MANAGEMENT_PUBLIC_URL}/docs)
  Dashboard   ${config.DASHBOARD_PUBLIC_URL}      (its own process; sign in with: bun run admin login-link --studio <id>)
  MCP         http://${reach}:${config.MCP_PORT}/mcp   (AI agents, with their key as Authorization: Bearer; over stdio: STUDIO_API_KEY=… bunx studio-mcp; docs/mcp.md)
  Operations  http://${reach}:${config.OPS_PORT}/metrics   (gateway metrics; the dashboard's at http://${reach}:${config.DASHBOARD_OPS_PORT}/metrics, each service's at its own port /metrics)
  Database    ${db}
  Mode        ${
    redisMode(config) === 'single-node'
      ? 'single-node mode: no Redis (one gateway; set REDIS_URL on every process to run more than one)'
      : `Redis ${config.REDIS_CLUSTER_NODES ? `Cluster ${config.REDIS_CLUSTER_NODES}` : masked(config.REDIS_URL)} (gateway replicas may be added)`
  }
  Webhooks    ${
    config.WEBHOOK_ALLOW_PRIVATE_URLS
      ? 'delivered to http:// and private addresses too (WEBHOOK_ALLOW_PRIVATE_URLS=true: local development only)'
      : 'delivered to public https:// URLs only (WEBHOOK_ALLOW_PRIVATE_URLS=true allows http://localhost, for development)'
  }
Press Ctrl-C to stop.`);
}
