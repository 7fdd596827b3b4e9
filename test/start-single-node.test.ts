/**
 * `bun run start` in single-node mode (docs/design/single-node.md): told `REDIS_URL=none` (what it decides by
 * itself when no Redis is named and none answers on 127.0.0.1:6379), it passes the mode to every
 * child, says so in its banner, and the stack serves without Redis.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { randomBase62 } from '@studio/shared';
import postgres from 'postgres';
import { readUntil } from '../scripts/lib/output';
import { stackPorts } from '../scripts/lib/ports';

const root = join(import.meta.dir, '..');
const base = process.env.TEST_DATABASE_URL!;
const dbName = `studio_start_sn_${randomBase62(8).toLowerCase()}`;
const dbUrl = Object.assign(new URL(base), { pathname: `/${dbName}` }).href;
const { port, env: ports } = await stackPorts(true);
const {
  storefront: sf,
  management: mg,
  dashboard: dash,
  ops,
  dashboardOps: dashOps,
  storefrontService: sfSvc,
  managementService: mgSvc,
  mcp,
} = port;
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  DATABASE_URL: dbUrl,
  REDIS_URL: 'none',
  REDIS_CLUSTER_NODES: '',
  ...ports,
};

let proc: ReturnType<typeof Bun.spawn>;
let output = '';
beforeAll(async () => {
  // a process group of its own, as a terminal gives a command: its Ctrl-C and hang-up go to the whole group
  proc = Bun.spawn(['bun', 'run', 'start'], { cwd: root, env, stdout: 'pipe', stderr: 'pipe', detached: true });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  output = await readUntil(reader, 'Press Ctrl-C', 25_000);
  reader.releaseLock();
}, 30_000);

afterAll(async () => {
  if (proc.exitCode === null) proc.kill('SIGTERM');
  await proc.exited;
  const a = postgres(base, { max: 1, onnotice: () => {} });
  await a.unsafe(`drop database if exists ${dbName} with (force)`);
  await a.end();
});

test('the banner says where webhooks go, and the dispatcher recorded that setting for the dashboard and the CLI to check URLs by', async () => {
  expect(output).toContain(
    'Webhooks    delivered to public https:// URLs only (WEBHOOK_ALLOW_PRIVATE_URLS=true allows http://localhost, for development)',
  );
  const db = postgres(dbUrl, { max: 1, onnotice: () => {} });
  try {
    let rows: { allowPrivateUrls: boolean }[] = [];
    for (let i = 0; i < 50 && !rows.length; i++, await Bun.sleep(100))
      rows = await db<
        { allowPrivateUrls: boolean }[]
      >`select allow_private_urls as "allowPrivateUrls" from webhook_delivery_setting`;
    expect(rows).toEqual([{ allowPrivateUrls: false }]);
  } finally {
    await db.end();
  }
});

test('the banner says single-node mode, and every process reports "redis": "none", ready', async () => {
  expect(output).toContain('Studio API is running');
  expect(output).toContain('Mode        single-node mode: no Redis');
  for (const port of [ops, dashOps, sfSvc, mgSvc]) {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(await res.json()).toEqual({ status: 'ready', checks: { postgres: 'up', redis: 'none' } });
  }
});

test('a second `bun run start` while this one runs is refused before it starts anything, naming the ports taken', async () => {
  const second = Bun.spawn(['bun', 'run', 'start'], { cwd: root, env, stdout: 'pipe', stderr: 'pipe' });
  const code = await Promise.race([second.exited, Bun.sleep(15_000).then(() => 'still running')]);
  if (code === 'still running') second.kill('SIGKILL');
  expect(code).toBe(1);
  const err = await new Response(second.stderr as ReadableStream).text();
  expect(err).toContain(`port ${sf} (STOREFRONT_PORT), port ${mg} (MANAGEMENT_PORT)`);
  expect(err).toContain(
    `port ${mgSvc} (MANAGEMENT_SERVICE_PORT), port ${mcp} (MCP_PORT) are in use by another process`,
  );
  expect(err).toContain('Is the stack already running in another terminal?');
  // the first stack is untouched
  expect((await fetch(`http://127.0.0.1:${ops}/readyz`)).status).toBe(200);
});

test('the terminal closing (SIGHUP to its process group) stops the stack as Ctrl-C does: the gateway and the dashboard first, then the services; exit 0, every port closed', async () => {
  process.kill(-proc.pid, 'SIGHUP');
  expect(await Promise.race([proc.exited, Bun.sleep(20_000).then(() => 'still running')])).toBe(0);
  // the services drain once the gateway has stopped (it may still forward in-flight calls to them), told by start
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) output += new TextDecoder().decode(r.value);
  const lines = output.split('\n');
  const at = (pattern: RegExp) => lines.findIndex((l) => pattern.test(l));
  const gatewayStopped = at(/"msg":"process stopped","process":"gateway"/);
  expect(gatewayStopped).toBeGreaterThan(at(/"msg":"gateway draining","signal":"SIGTERM"/));
  const dashboardStopped = at(/"msg":"process stopped","process":"dashboard"/);
  expect(dashboardStopped).toBeGreaterThan(at(/"msg":"dashboard draining","signal":"SIGTERM"/));
  for (const service of ['storefront-service', 'management-service'])
    expect(at(new RegExp(`"msg":"${service} draining","signal":"SIGTERM"`))).toBeGreaterThan(
      Math.max(gatewayStopped, dashboardStopped),
    );
  for (const port of [sf, mg, dash, ops, dashOps, sfSvc, mgSvc, mcp]) {
    const open = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => true,
      () => false,
    );
    expect(open).toBe(false);
  }
}, 30_000);
