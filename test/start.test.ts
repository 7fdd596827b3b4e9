/**
 * The front door: `bun run start` brings up the three processes on their own,
 * migrations included, and a first call works. SIGTERM flushes pending activity.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { createApiKey } from '@studio/control';
import { randomBase62 } from '@studio/shared';
import { createSql, type Sql } from '@studio/shared/io';
import postgres from 'postgres';
import { readUntil } from '../scripts/lib/output';
import { stackPorts } from '../scripts/lib/ports';
import { createStudio } from '../scripts/lib/studios';
import { expectProblem } from './harness';

const root = join(import.meta.dir, '..');
const base = process.env.TEST_DATABASE_URL!;
const dbName = `studio_start_${randomBase62(8).toLowerCase()}`; // not created: start must create and migrate it
const dbUrl = Object.assign(new URL(base), { pathname: `/${dbName}` }).href;
const { port: ports, env: portEnv } = await stackPorts();
const { storefront: port, management: p1, dashboard: p2, storefrontService: p3, managementService: p4 } = ports;
const {
  STOREFRONT_SERVICE_URL: _sf,
  MANAGEMENT_SERVICE_URL: _mg,
  STOREFRONT_PUBLIC_URL: _sfp,
  MANAGEMENT_PUBLIC_URL: _mgp,
  DASHBOARD_PUBLIC_URL: _dp,
  ...inherited
} = process.env as Record<string, string>;
const env: Record<string, string> = {
  ...inherited,
  DATABASE_URL: dbUrl,
  REDIS_URL: process.env.TEST_REDIS_URL!,
  REDIS_PREFIX: `start_${randomBase62(6)}:`,
  ACTIVITY_FLUSH_MS: '600000', // only the shutdown flush can write the entries below
  ...portEnv,
  // no STOREFRONT_SERVICE_URL or MANAGEMENT_SERVICE_URL: start reaches the services on the ports it gives them;
  // no public URL either: the banner, the login links and the documents name the ports the gateway was given
};

let proc: ReturnType<typeof Bun.spawn>;
let output = '';
let sql: Sql;

beforeAll(async () => {
  proc = Bun.spawn(['bun', 'run', 'start'], { cwd: root, env, stdout: 'pipe', stderr: 'pipe' });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  output = await readUntil(reader, 'Studio API is running', 20_000);
  reader.releaseLock();
  if (!output.includes('Studio API is running'))
    console.error(await new Response(proc.stderr as ReadableStream).text());
  sql = createSql(dbUrl, { max: 2 });
}, 30_000);

afterAll(async () => {
  if (proc.exitCode === null) proc.kill('SIGTERM');
  await proc.exited;
  await sql.end();
  const a = postgres(base, { max: 1, onnotice: () => {} });
  await a.unsafe(`drop database if exists ${dbName} with (force)`);
  await a.end();
});

test('bun run start migrates a new database, starts everything and prints the three URLs', async () => {
  expect(output).toContain('migrations applied: 00001_init.sql, 00002_activity_without_foreign_keys.sql');
  expect(output).toContain(`Storefront  http://127.0.0.1:${port}/v1`);
  expect(output).toContain(`Management  http://127.0.0.1:${p1}/v1`);
  expect(output).toContain(`Dashboard   http://127.0.0.1:${p2}`);
  // the dashboard is a process of its own: its pages on its port, its readiness and metrics on its operations port only
  expect(output).toMatch(/"msg":"process started","process":"dashboard","pid":\d+/);
  expect(output).toContain(`the dashboard's at http://127.0.0.1:${ports.dashboardOps}/metrics`);
  expect((await fetch(`http://127.0.0.1:${p2}/sign-in`)).status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${ports.dashboardOps}/readyz`)).status).toBe(200);
  expect(await (await fetch(`http://127.0.0.1:${ports.dashboardOps}/metrics`)).text()).toContain(
    'studio_http_requests_total{surface="dashboard",operation="/sign-in",status="200"} 1',
  );
  expect((await fetch(`http://127.0.0.1:${p2}/metrics`)).status).toBe(404);
});

test('the ports given are the public URLs too: the documents the gateway serves name them', async () => {
  for (const p of [port, p1]) {
    const doc = await (await fetch(`http://127.0.0.1:${p}/openapi.json`)).json();
    expect(doc.servers).toEqual([{ url: `http://127.0.0.1:${p}` }]);
  }
});

test('the MCP server runs beside the gateway: the banner names its URL, and it answers (a key is needed)', async () => {
  expect(output).toContain(`MCP         http://127.0.0.1:${ports.mcp}/mcp`);
  expect(output).toMatch(/"msg":"process started","process":"mcp","pid":\d+/);
  expect(await (await fetch(`http://127.0.0.1:${ports.mcp}/readyz`)).json()).toMatchObject({ status: 'ready' });
  const res = await fetch(`http://127.0.0.1:${ports.mcp}/mcp`, { method: 'POST', body: '{}' });
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="studio-api"');
});

test('a child that dies is started again, and the stack keeps serving', async () => {
  const pid = Number(/"process":"management-service","pid":(\d+)/.exec(output)?.[1]);
  expect(pid).toBeGreaterThan(0);
  process.kill(pid, 'SIGKILL');
  let back = false;
  for (let i = 0; i < 100 && !back; i++) {
    await Bun.sleep(100);
    back = await fetch(`http://127.0.0.1:${p4}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
  }
  expect(back).toBe(true);
  expect(proc.exitCode).toBeNull(); // `bun run start` itself is still running
}, 20_000);

test('a publishable key answers 200 on the Storefront and 401 on Management; SIGTERM flushes activity', async () => {
  const { studio } = await createStudio(sql, { name: 'Front Door' });
  const { key, record } = await createApiKey(sql, { studioId: studio.id, kind: 'publishable', name: 'web' });
  const ok = await fetch(`http://127.0.0.1:${port}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('content-type')).toStartWith('application/json');
  expect(await ok.json()).toEqual({ instructors: [] });
  await expectProblem(
    await fetch(`http://127.0.0.1:${p1}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } }),
    401,
    'api_key_wrong_kind',
  );
  // the internal ports refuse callers who skip the gateway
  await expectProblem(await fetch(`http://127.0.0.1:${p3}/v1/instructors`), 401, 'gateway_signature_invalid');

  expect((await sql`select count(*)::int as n from activity`)[0]!.n).toBe(0);
  proc.kill('SIGTERM');
  expect(await proc.exited).toBe(0);
  const rows = await sql`select operation_id, status from activity where key_id = ${record.id} order by id`;
  expect(rows.map((r) => [r.operationId, r.status])).toEqual([
    ['storefrontListInstructors', 200],
    ['managementListInstructors', 401],
  ]);
});
