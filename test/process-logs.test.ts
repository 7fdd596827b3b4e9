/**
 * docs/design/observability.md's log lines as production writes them: the three processes, each its own
 * `main.ts`, stdout collected. Every line names its process, so the gateway's and the
 * service's line of one proxied request are told apart; a dashboard request is logged too.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ensureDefaultSandbox } from '@studio/management-service/sandboxes';
import { SCOPES, scopesOfMode } from '@studio/shared';
import { type Stack, startStack } from './harness';
import { type SpawnedStack, spawnStack } from './spawned-stack';

type Line = Record<string, unknown>;

let s: Stack;
let stack: SpawnedStack;

const linesOf = (name: string, stream: 'out' | 'err' = 'out'): Line[] =>
  stack.procs
    .find((p) => p.name === name)!
    [stream].text.split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

/** The access lines of this request id, waited for (they are flushed every 100 ms). */
async function requestLines(name: string, match: (l: Line) => boolean): Promise<Line[]> {
  for (let i = 0; i < 40; i++) {
    const found = linesOf(name).filter((l) => l.msg === 'request' && match(l));
    if (found.length) return found;
    await Bun.sleep(50);
  }
  return [];
}

beforeAll(async () => {
  s = await startStack();
  stack = await spawnStack(s);
}, 30_000);

afterAll(async () => {
  await stack?.stop();
  await s?.close();
});

test('a proxied request is logged once by the gateway and once by its service, each line naming its process', async () => {
  const studioId = (await s.studio()).id;
  const { key } = await s.key(studioId, 'secret', SCOPES);
  const res = await fetch(`${stack.urls.management}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  const requestId = res.headers.get('x-request-id')!;
  const gwLines = await requestLines('gateway', (l) => l.requestId === requestId);
  const svcLines = await requestLines('management-service', (l) => l.requestId === requestId);
  expect([gwLines.length, svcLines.length]).toEqual([1, 1]);
  const [gw, svc] = [gwLines[0], svcLines[0]];
  expect(gw).toMatchObject({
    service: 'gateway',
    surface: 'management',
    operation: 'managementListInstructors',
    status: 200,
  });
  expect(svc).toMatchObject({
    service: 'management-service',
    surface: 'management',
    operation: 'managementListInstructors',
    status: 200,
  });
  expect(gw!.traceId).toBe(svc!.traceId);
  const sfRes = await fetch(`${stack.urls.storefront}/v1/classes`, {
    headers: { authorization: 'Bearer svc_pk_nope' },
  });
  expect(sfRes.status).toBe(401);
  expect((await requestLines('gateway', (l) => l.requestId === sfRes.headers.get('x-request-id')))[0]).toMatchObject({
    service: 'gateway',
    surface: 'storefront',
  });
  // every line of every process names it, access lines and the others ("listening") alike
  for (const p of stack.procs) {
    const lines = linesOf(p.name);
    expect(lines.length).toBeGreaterThan(0);
    expect(`${p.name}: ${lines.filter((l) => l.service !== p.name).map((l) => JSON.stringify(l))}`).toBe(`${p.name}: `);
  }
});

test("a test key's call: its gateway line says mode test, and no process writes the key's text, pasted into a path or query or not", async () => {
  const studioId = (await s.studio()).id;
  const { sandbox } = await ensureDefaultSandbox(s.sql, studioId);
  const { key } = await s.key(sandbox.id, 'secret', scopesOfMode('test'));
  const pk = (await s.key(sandbox.id, 'publishable')).key;
  const calls = [
    fetch(`${stack.urls.management}/v1/instructors?api_key=${key}`, { headers: { authorization: `Bearer ${key}` } }),
    fetch(`${stack.urls.management}/v1/${key}`, { headers: { authorization: `Bearer ${key}` } }),
    fetch(`${stack.urls.storefront}/v1/classes?key=${pk}`, { headers: { authorization: `Bearer ${pk}` } }),
  ];
  const answers = await Promise.all(calls);
  // an unknown query parameter is 422 on Management, and ignored by the Storefront
  expect(answers.map((r) => r.status)).toEqual([422, 404, 200]);
  const lines = await requestLines('gateway', (l) => l.requestId === answers[0]!.headers.get('x-request-id'));
  expect(lines[0]).toMatchObject({ mode: 'test', status: 422 });
  const [pasted] = await requestLines('gateway', (l) => l.requestId === answers[1]!.headers.get('x-request-id'));
  expect(pasted).toMatchObject({ mode: 'test', path: '/v1/svc_sk_test_[redacted]' });
  // a live key's line names no mode
  const live = (await s.key(studioId, 'secret', SCOPES)).key;
  const liveRes = await fetch(`${stack.urls.management}/v1/instructors`, {
    headers: { authorization: `Bearer ${live}` },
  });
  const [liveLine] = await requestLines('gateway', (l) => l.requestId === liveRes.headers.get('x-request-id'));
  expect(liveLine!.mode).toBeUndefined();
  await Bun.sleep(250); // every process's batch
  for (const p of stack.procs)
    for (const text of [key.slice(12), pk.slice(12)]) {
      expect(`${p.name}: ${p.out.text.includes(text)}`).toBe(`${p.name}: false`);
      expect(`${p.name}: ${p.err.text.includes(text)}`).toBe(`${p.name}: false`);
    }
});

test("a service's error line names its process too (a stored record its answer cannot carry: 500)", async () => {
  const studioId = (await s.studio()).id;
  const { key } = await s.key(studioId, 'secret', SCOPES);
  await s.sql`insert into members (id, studio_id, email, role, status, invited_at)
    values ('mem_' || substr(md5(random()::text), 1, 22), ${studioId}, ${`${'a'.repeat(300)}@x.test`}, 'member', 'invited', now())`;
  const res = await fetch(`${stack.urls.management}/v1/members`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(500);
  const requestId = res.headers.get('x-request-id');
  let line: Line | undefined;
  for (let i = 0; i < 40 && !line; i++, await Bun.sleep(50))
    line = linesOf('management-service', 'err').find((l) => l.msg === 'unhandled error' && l.requestId === requestId);
  expect(line).toMatchObject({ level: 'error', service: 'management-service' });
});

test("a call that skips the gateway names nothing it sent in the service's line and metrics: no key text, id or operation of its own", async () => {
  const svc = stack.procs.find((p) => p.name === 'management-service')!;
  const serviceUrl = linesOf('management-service').find((l) => l.msg === 'management-service listening')!.url as string;
  const res = await fetch(`${serviceUrl}/v1/instructors`, {
    headers: {
      'x-gw-operation': 'managementCreateClass',
      'x-gw-key': 'svc_sk_pasted_by_a_stranger',
      'x-request-id': 'req_made_up',
    },
  });
  expect(res.status).toBe(401);
  await Bun.sleep(250); // the line's batch
  expect(svc.out.text).not.toContain('svc_sk_pasted_by_a_stranger');
  expect(svc.out.text).not.toContain('req_made_up');
  const metrics = await (await fetch(`${serviceUrl}/metrics`)).text();
  expect(metrics).not.toContain('operation="managementCreateClass"');
});

test('a dashboard request is logged (path without its query) and counted, labelled by route', async () => {
  const res = await fetch(`${stack.urls.dashboard}/login?token=secret-token-text`);
  const requestId = res.headers.get('x-request-id')!;
  const [line] = await requestLines('dashboard', (l) => l.requestId === requestId);
  expect(line).toMatchObject({
    service: 'dashboard',
    surface: 'dashboard',
    operation: '/login',
    method: 'GET',
    path: '/login',
    status: res.status,
    keyId: null,
  });
  expect(typeof line!.durationMs).toBe('number');
  expect(stack.procs.find((p) => p.name === 'dashboard')!.out.text).not.toContain('secret-token-text');
  // a key pasted into a dashboard path (a 404) is redacted from its line, as on the API ports
  const pasted = `svc_sk_${'Z'.repeat(32)}`;
  const lost = await fetch(`${stack.urls.dashboard}/keys/${pasted}/nowhere`);
  const [lostLine] = await requestLines('dashboard', (l) => l.requestId === lost.headers.get('x-request-id'));
  expect(lostLine!.path).toBe('/keys/svc_sk_[redacted]/nowhere');
  expect(stack.procs.find((p) => p.name === 'dashboard')!.out.text).not.toContain(pasted);
  const metrics = await (await fetch(`${stack.urls.dashboardOps}/metrics`)).text();
  expect(metrics).toContain(
    `studio_http_requests_total{surface="dashboard",operation="/login",status="${res.status}"} 1`,
  );
});
