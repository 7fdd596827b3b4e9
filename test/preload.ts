/**
 * Runs once before the test files: finds Postgres and Redis (testcontainers when a
 * Docker engine answers, else DATABASE_URL / REDIS_URL, default the local servers)
 * and builds a migrated template database that every test file clones.
 */
import { afterAll } from 'bun:test';
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { type LogLevel, setLogLevel } from '@studio/shared';
import postgres from 'postgres';
import { MIGRATIONS_DIR, migrate } from '../scripts/lib/migrate';
import { checkDocumented, checkedSurfaces } from './documented';

// one access line per request would bury the test report: warnings and errors only, unless asked
setLogLevel((process.env.TEST_LOG_LEVEL as LogLevel | undefined) ?? 'warn');

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

const stops: Array<() => Promise<unknown>> = [];
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
    process.env.TEST_REDIS_URL = rd.getConnectionUrl();
    console.error(
      `tests: testcontainers Postgres ${pg.getHost()}:${pg.getPort()}, Redis ${rd.getHost()}:${rd.getPort()}`,
    );
  } else {
    process.env.TEST_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    process.env.TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  }
}

// `bun run test:cluster`: the Redis tests again on a three-master Redis Cluster of their own (docs/design/scale-out.md)
if (process.env.TEST_REDIS_CLUSTER === '1' && !process.env.TEST_REDIS_CLUSTER_NODES) {
  const { startRedisCluster } = await import('../scripts/lib/redis-cluster');
  const cluster = await startRedisCluster();
  stops.push(() => cluster.stop());
  process.env.TEST_REDIS_CLUSTER_NODES = cluster.nodes;
  console.error(`tests: Redis Cluster ${cluster.nodes}`);
}

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

// Every answer from a registered gateway surface must match its OpenAPI document (test/documented.ts).
const realFetch = globalThis.fetch;
globalThis.fetch = Object.assign(async (input: string | URL | Request, init?: RequestInit) => {
  const res = await realFetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
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
  for (const stop of stops) await stop();
});
