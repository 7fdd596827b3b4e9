/**
 * Runs once before the test files: finds Postgres and Redis, or starts what is missing, and says in one line what
 * it found and what will be skipped; builds a migrated template database that every test file clones; at the end
 * names what was skipped (test/needs.ts) and stops every server it started, also when interrupted.
 *
 * Postgres: TEST_DATABASE_URL as given; else testcontainers when a Docker engine answers; else DATABASE_URL or
 * 127.0.0.1:5432 when it answers `select 1`; else an embedded Postgres of the run's own (scripts/lib/embedded-pg.ts,
 * as `bun run start` runs it) in the OS temp directory, on a free port. Redis: TEST_REDIS_URL as given; else
 * testcontainers; else REDIS_URL or 127.0.0.1:6379 when it answers PING; else none (TEST_REDIS_URL=none): stacks
 * run single-node, and the tests that need a Redis server skip.
 */
import { afterAll } from 'bun:test';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, DEFAULT_REDIS_URL, type LogLevel, setLogLevel } from '@studio/shared';
import { refusedAddress } from '@studio/shared/webhooks';
import postgres from 'postgres';
import { MIGRATIONS_DIR, migrate } from '../scripts/lib/migrate';
import { checkDocumented, checkedSurfaces } from './documented';
import { has, skippedSummary } from './needs';

// one access line per request would bury the test report: warnings and errors only, unless asked
setLogLevel((process.env.TEST_LOG_LEVEL as LogLevel | undefined) ?? 'warn');

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

async function dockerAnswers(): Promise<boolean> {
  const host = process.env.DOCKER_HOST;
  try {
    if (host?.startsWith('tcp://'))
      return (await fetch(`${host.replace('tcp://', 'http://')}/_ping`, { signal: AbortSignal.timeout(1000) })).ok;
    const socket = host?.startsWith('unix://') ? host.slice(7) : '/var/run/docker.sock';
    if (!(await Bun.file(socket).exists())) return false;
    return (await fetch('http://localhost/_ping', { unix: socket, signal: AbortSignal.timeout(1000) } as RequestInit))
      .ok;
  } catch {
    return false;
  }
}

/** Whether a Postgres at `url` answers `select 1` within a few seconds (nothing listening: at once). */
async function postgresAnswers(url: string): Promise<boolean> {
  const u = new URL(url);
  if (!answers(u.hostname.replace(/^\[|\]$/g, ''), Number(u.port || 5432))) return false;
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** Whether a Redis at `url` answers PING (or asks for a password, which the URL may carry) within a second. */
async function redisAnswers(url: string): Promise<boolean> {
  const u = new URL(url);
  const reply = Promise.withResolvers<boolean>();
  const timer = setTimeout(() => reply.resolve(false), 1000);
  try {
    const socket = await Bun.connect({
      hostname: u.hostname.replace(/^\[|\]$/g, ''),
      port: Number(u.port || 6379),
      tls: u.protocol === 'rediss:',
      socket: {
        data: (_, data) => reply.resolve(/^(\+PONG|-NOAUTH)/.test(data.toString())),
        close: () => reply.resolve(false),
        error: () => reply.resolve(false),
      },
    });
    socket.write('PING\r\n');
    const ok = await reply.promise;
    socket.end();
    return ok;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Every server this run started, stopped once: at the end, when the preload fails, or on SIGINT/SIGTERM. */
const stops: Array<() => Promise<unknown>> = [];
let stopping: Promise<void> | undefined;
const stopAll = () =>
  (stopping ??= (async () => {
    for (const stop of stops.splice(0).reverse())
      await stop().catch((err) => console.error(`tests: stopping a server failed: ${err}`));
  })());
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)
  process.once(signal, () => void stopAll().finally(() => process.exit(code)));

/** A Postgres of the run's own: the embedded one, in a temporary directory, gone when the run ends. */
async function startEmbedded(): Promise<string> {
  const { startEmbeddedPostgres } = await import('../scripts/lib/embedded-pg');
  const dir = mkdtempSync(join(tmpdir(), 'studio-test-pg-'));
  chmodSync(dir, 0o711); // as root, Postgres runs as another user, who must reach its data directory in here
  stops.push(async () => rmSync(dir, { recursive: true, force: true }));
  const pg = await startEmbeddedPostgres({
    dataDir: join(dir, 'data'),
    stateFile: join(dir, 'state.json'),
    // a cluster thrown away at the end needs no durability; the suite's stacks and spawned processes need connections
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
  });
  stops.push(() => pg.stop());
  const url = new URL(pg.url);
  url.pathname = '/postgres';
  return url.href;
}

const found: string[] = [];
try {
  if (!process.env.TEST_DATABASE_URL) {
    if (process.env.TESTCONTAINERS !== '0' && (await dockerAnswers())) {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const { RedisContainer } = await import('@testcontainers/redis');
      const [pg, rd] = await Promise.all([
        new PostgreSqlContainer('postgres:15').start(),
        new RedisContainer('redis:7').start(),
      ]);
      stops.push(
        () => pg.stop(),
        () => rd.stop(),
      );
      process.env.TEST_DATABASE_URL = pg.getConnectionUri();
      process.env.TEST_REDIS_URL ??= rd.getConnectionUrl();
      found.push(`Postgres testcontainers ${pg.getHost()}:${pg.getPort()}`);
    } else {
      const candidate = process.env.DATABASE_URL ?? LOCAL_POSTGRES;
      const where = process.env.DATABASE_URL ? 'DATABASE_URL' : '127.0.0.1:5432';
      if (await postgresAnswers(candidate)) {
        process.env.TEST_DATABASE_URL = candidate;
        found.push(`Postgres ${where}`);
      } else {
        process.env.TEST_DATABASE_URL = await startEmbedded();
        found.push(`Postgres embedded (${where} did not answer; port ${new URL(process.env.TEST_DATABASE_URL).port})`);
      }
    }
  } else found.push('Postgres TEST_DATABASE_URL');

  if (!process.env.TEST_REDIS_URL) {
    const candidate = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
    const where = process.env.REDIS_URL ? 'REDIS_URL' : '127.0.0.1:6379';
    process.env.TEST_REDIS_URL = candidate !== 'none' && (await redisAnswers(candidate)) ? candidate : 'none';
    found.push(process.env.TEST_REDIS_URL === 'none' ? `Redis none (${where} did not answer)` : `Redis ${where}`);
  } else found.push(process.env.TEST_REDIS_URL === 'none' ? 'Redis none (TEST_REDIS_URL)' : 'Redis TEST_REDIS_URL');

  // `bun run test:cluster`: the Redis tests again on a three-master Redis Cluster of their own (docs/design/scale-out.md)
  if (process.env.TEST_REDIS_CLUSTER === '1' && !process.env.TEST_REDIS_CLUSTER_NODES) {
    const { startRedisCluster } = await import('../scripts/lib/redis-cluster');
    const cluster = await startRedisCluster();
    stops.push(() => cluster.stop());
    process.env.TEST_REDIS_CLUSTER_NODES = cluster.nodes;
    // the stacks' REDIS_URL is unused beside REDIS_CLUSTER_NODES, but single-node it must not be
    if (process.env.TEST_REDIS_URL === 'none') process.env.TEST_REDIS_URL = cluster.nodes.split(',')[0];
    found.push(`Redis Cluster ${cluster.nodes}`);
  }

  const present = (what: string, need: Parameters<typeof has>[0]) => `${what} ${has(need) ? 'present' : 'absent'}`;
  const skips = [
    has('redis') ? '' : 'a Redis server',
    has('redis-server') ? '' : 'the redis-server binary',
    has('pg-binaries') ? '' : 'initdb and pg_ctl',
  ].filter(Boolean);
  console.error(
    `tests: ${found.join(', ')}; ${present('redis-server', 'redis-server')}, ${present('initdb', 'pg-binaries')}` +
      (skips.length
        ? `; the tests that need ${skips.join(' or ')} skip, named at the end`
        : '; nothing skips for want of a server'),
  );

  // One template per migration set: named by a hash of the files, rebuilt only when they change.
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  const hash = createHash('sha256');
  for (const f of files) hash.update(f).update(await Bun.file(`${MIGRATIONS_DIR}/${f}`).text());
  const template = `studio_tpl_${hash.digest('hex').slice(0, 12)}`;
  const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  const [exists] = await admin`select 1 from pg_database where datname = ${template}`;
  if (!exists) {
    const building = `${template}_${process.pid}`;
    const u = new URL(process.env.TEST_DATABASE_URL!);
    u.pathname = `/${building}`;
    await migrate(u.href);
    await admin
      .unsafe(`alter database ${building} rename to ${template}`)
      .catch(() => admin.unsafe(`drop database if exists ${building}`));
  }
  await admin.end();
  process.env.TEST_TEMPLATE_DB = template;
} catch (err) {
  await stopAll();
  throw err;
}

// A test sends only to loopback or its own network namespaces (private addresses), never to a public address, even
// one that "cannot answer": a fetch of the test process (a test's own, or a dispatcher's attempt) to any other host is
// refused before it connects, and said on stderr (a public address written as an IP once passed an endpoint's checks in
// a dashboard test, and a dispatcher then called it with a test event). And every answer from a registered gateway
// surface must match its OpenAPI document (test/documented.ts).
const realFetch = globalThis.fetch;
globalThis.fetch = Object.assign(async (input: string | URL | Request, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host !== 'localhost' && !(isIP(host) && refusedAddress(host))) {
    const message = `test/preload.ts: a test sends only to loopback or its own network namespaces, not to ${url.host}`;
    console.error(message);
    throw new TypeError(message);
  }
  const res = await realFetch(input, init);
  const surface = checkedSurfaces.get(url.origin);
  if (surface)
    await checkDocumented(
      surface,
      (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(),
      url,
      res.clone(),
    );
  return res;
}, realFetch);

afterAll(async () => {
  for (const line of skippedSummary()) console.error(line);
  await stopAll();
});
