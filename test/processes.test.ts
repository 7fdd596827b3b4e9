/**
 * A service as production runs it (its own Bun process, `main.ts`): one JSON access line
 * per request honouring LOG_LEVEL, and a graceful drain on SIGTERM.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { type Caller, signedHeaders } from '@studio/shared';
import { freePort } from '../scripts/lib/ports';
import { redisCheck, type Stack, startStack } from './harness';
import { collect, ready } from './spawned-stack';

const root = join(import.meta.dir, '..');
let s: Stack;
let studioId: string;
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio()).id;
});
afterAll(() => s.close());

/** A process from its main.ts over the stack's stores and secrets, its stdout and stderr collected, once `readyUrl` is ready. */
async function spawnMain(entry: string, env: Record<string, string>, readyUrl: string) {
  const proc = Bun.spawn(['bun', join(root, entry)], {
    cwd: root,
    env: {
      ...(process.env as Record<string, string>),
      DATABASE_URL: s.config.DATABASE_URL,
      REDIS_URL: s.config.REDIS_URL,
      REDIS_PREFIX: s.config.REDIS_PREFIX,
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out = collect(proc.stdout as ReadableStream<Uint8Array>);
  const err = collect(proc.stderr as ReadableStream<Uint8Array>);
  await ready(readyUrl);
  return { proc, out, err };
}

/** management-service in its own process (on `port`, else a free one), its stdout and stderr collected. */
async function spawnService(logLevel: string, port?: number) {
  port ??= await freePort();
  const url = `http://127.0.0.1:${port}`;
  const { proc, out, err } = await spawnMain(
    'management-service/src/main.ts',
    {
      GATEWAY_SECRET: s.config.GATEWAY_SECRET,
      CURSOR_SECRET: s.config.CURSOR_SECRET,
      MANAGEMENT_SERVICE_PORT: String(port),
      LOG_LEVEL: logLevel,
    },
    url,
  );
  const lines = () =>
    out.text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { proc, url, lines, stderr: () => err.text };
}

const callerOf = (operationId: string): Caller => ({
  studioId,
  keyId: 'key_logged',
  scopes: ['instructors:read', 'instructors:write'],
  operationId,
  requestId: `req_${crypto.randomUUID().slice(0, 8)}`,
});

test('one JSON access line per request, with ids, trace, operation, status and duration; none below LOG_LEVEL', async () => {
  const svc = await spawnService('info');
  try {
    const caller = callerOf('managementListInstructors');
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const res = await fetch(`${svc.url}/v1/instructors`, {
      headers: { ...signedHeaders(s.config.GATEWAY_SECRET, 'GET', '/v1/instructors', caller), traceparent },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('traceresponse')).toStartWith('00-0af7651916cd43dd8448eb211c80319c-');
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 40 && !line; i++) {
      await Bun.sleep(50);
      line = svc.lines().find((l) => l.msg === 'request' && l.requestId === caller.requestId);
    }
    expect(line).toMatchObject({
      level: 'info',
      requestId: caller.requestId,
      traceId: '0af7651916cd43dd8448eb211c80319c',
      surface: 'management',
      operation: 'managementListInstructors',
      method: 'GET',
      status: 200,
      keyId: 'key_logged',
    });
    expect(typeof line!.durationMs).toBe('number');
    expect(typeof line!.time).toBe('string');
  } finally {
    svc.proc.kill('SIGTERM');
    await svc.proc.exited;
  }
  const quiet = await spawnService('warn');
  try {
    const caller = callerOf('managementListInstructors');
    await fetch(`${quiet.url}/v1/instructors`, {
      headers: signedHeaders(s.config.GATEWAY_SECRET, 'GET', '/v1/instructors', caller),
    });
    await Bun.sleep(300);
    expect(quiet.lines().filter((l) => l.msg === 'request')).toEqual([]);
  } finally {
    quiet.proc.kill('SIGTERM');
    await quiet.proc.exited;
  }
});

test('SIGTERM drains: no new connections, the request in flight completes, the process exits 0', async () => {
  const svc = await spawnService('warn');
  // hold the instructors table, so a create waits in the service until released
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const locked = new Promise<void>((ready) => {
    void s.sql.begin(async (tx) => {
      await tx`lock table instructors in access exclusive mode`;
      ready();
      await held;
    });
  });
  await locked;
  const caller = callerOf('managementCreateInstructor');
  const body = JSON.stringify({ name: 'Drained' });
  const idempotencyKey = crypto.randomUUID();
  const inFlight = fetch(`${svc.url}/v1/instructors`, {
    method: 'POST',
    body,
    headers: {
      ...signedHeaders(s.config.GATEWAY_SECRET, 'POST', '/v1/instructors', caller, Date.now(), {
        body,
        idempotencyKey,
      }),
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
  });
  await Bun.sleep(300);
  svc.proc.kill('SIGTERM');
  await Bun.sleep(300);
  const late = await fetch(`${svc.url}/readyz`).then(
    (r) => r.status,
    () => 'refused',
  );
  expect(['refused', 503]).toContain(late);
  release();
  const res = await inFlight;
  expect(res.status).toBe(201);
  expect(await svc.proc.exited).toBe(0);
  expect(await s.sql`select 1 from instructors where studio_id = ${studioId} and name = 'Drained'`).toHaveLength(1);
});

test('a port in use: a second process exits 1 with one line naming the port and its variable, and never shares it', async () => {
  const first = await spawnService('warn');
  const port = Number(new URL(first.url).port);
  try {
    // Bun binds production-mode servers with SO_REUSEPORT unless told not to: the second would then take half the connections
    const second = await spawnService('warn', port);
    const code = await Promise.race([second.proc.exited, Bun.sleep(10_000).then(() => 'still running')]);
    if (code === 'still running') second.proc.kill('SIGKILL');
    expect(code).toBe(1);
    expect(second.stderr().trim()).toBe(
      `error: port ${port} (MANAGEMENT_SERVICE_PORT) is in use by another process: stop it, or set MANAGEMENT_SERVICE_PORT to a free port`,
    );
  } finally {
    first.proc.kill('SIGTERM');
    await first.proc.exited;
  }
});

/** The dashboard in its own process (dashboard/src/main.ts), on free ports, its stdout and stderr collected. */
async function spawnDashboard() {
  const [port, opsPort] = [await freePort(), await freePort()];
  const ops = `http://127.0.0.1:${opsPort}`;
  const env = {
    DASHBOARD_SECRET: s.config.DASHBOARD_SECRET,
    DASHBOARD_PORT: String(port),
    DASHBOARD_OPS_PORT: String(opsPort),
    LOG_LEVEL: 'info',
  };
  const { proc, out } = await spawnMain('dashboard/src/main.ts', env, ops);
  return { proc, url: `http://127.0.0.1:${port}`, ops, out };
}

test('the dashboard process: its pages on its port, /metrics and /readyz on its operations port only; SIGTERM drains, exit 0', async () => {
  const d = await spawnDashboard();
  try {
    expect((await fetch(`${d.url}/sign-in`)).status).toBe(200);
    expect((await fetch(`${d.url}/metrics`)).status).toBe(404); // never on the public port
    expect(await (await fetch(`${d.ops}/readyz`)).json()).toEqual({
      status: 'ready',
      checks: { postgres: 'up', redis: redisCheck(s) },
    });
    const metrics = await (await fetch(`${d.ops}/metrics`)).text();
    expect(metrics).toContain('studio_http_requests_total{surface="dashboard",operation="/sign-in",status="200"} 1');
    expect(metrics).toContain('studio_http_requests_total{surface="dashboard",operation="unknown",status="404"} 1');
    expect(d.out.text).toContain('"msg":"dashboard listening"');
  } finally {
    d.proc.kill('SIGTERM');
  }
  expect(await d.proc.exited).toBe(0);
  expect(d.out.text).toContain('"msg":"dashboard draining","signal":"SIGTERM"');
  const closed = await fetch(`${d.url}/sign-in`).then(
    () => false,
    () => true,
  );
  expect(closed).toBe(true);
});
