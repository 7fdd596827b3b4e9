/**
 * `webhook:listen` and `event:trigger`, run as a developer runs them beside a stack: clients of its Management API
 * with a test key of the demo studio's sandbox, forwarding to a receiver on this machine.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { EVENT_TYPES } from '@studio/shared';
import { Webhook } from 'standardwebhooks';
import { listen } from '../../scripts/lib/listen';
import { seedDemo } from '../../scripts/lib/seed';
import { TRIGGER_TYPES, triggerEvent } from '../../scripts/lib/trigger';
import { type Stack, startStack } from '../harness';
import { startReceiver, until } from './helpers';

const root = join(import.meta.dir, '../..');
let s: Stack;
let demo: Awaited<ReturnType<typeof seedDemo>>;
beforeAll(async () => {
  s = await startStack();
  demo = await seedDemo(s.sql, s.config);
});
afterAll(() => s.close());

function spawnAdmin(args: string[]) {
  return Bun.spawn(['bun', 'scripts/admin.ts', ...args], {
    cwd: root,
    // the stack's API, as MANAGEMENT_PUBLIC_URL names it for every command; no database is needed
    env: { ...process.env, MANAGEMENT_PUBLIC_URL: s.managementUrl },
    stdout: 'pipe',
    stderr: 'pipe',
  });
}
async function admin(...args: string[]) {
  const p = spawnAdmin(args);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code, json: () => JSON.parse(out) };
}

/** A running `webhook:listen`: its stdout lines as they come, and a wait for the first line that matches. */
function startListen(...args: string[]) {
  const p = spawnAdmin(['webhook:listen', ...args]);
  const lines: string[] = [];
  const stderr = new Response(p.stderr).text();
  void (async () => {
    const reader = p.stdout.getReader();
    const decoder = new TextDecoder();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      rest += decoder.decode(r.value, { stream: true });
      const parts = rest.split('\n');
      rest = parts.pop()!;
      lines.push(...parts);
    }
  })();
  return {
    p,
    lines,
    stderr,
    async line(re: RegExp, timeoutMs = 10_000): Promise<string> {
      await until(() => lines.some((l) => re.test(l)), timeoutMs);
      return lines.find((l) => re.test(l))!;
    },
  };
}

const write = (key: string, method: string, path: string, body?: unknown) =>
  s.mg(path, key, {
    method,
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const feed = async (key: string, query = '') =>
  (await (await s.mg(`/v1/events?limit=100${query}`, key)).json()) as {
    data: { id: string; type: string; requestId: string; data: { object: { id: string } } }[];
  };

test('webhook:listen forwards each new event of the sandbox, signed so that standardwebhooks verifies it', async () => {
  const key = demo.testKeys.secret;
  // recorded before it starts: not forwarded (it starts from the newest event)
  expect((await write(key, 'POST', '/v1/instructors', { name: 'Before' })).status).toBe(201);
  const receiver = startReceiver();
  const l = startListen('--forward-to', receiver.url, '--key', key);
  try {
    const secret = (await l.line(/signing secret/)).match(/(whsec_\S+)/)![1]!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await l.line(/^Listening for the events after evt_/);

    const made = await write(key, 'POST', '/v1/instructors', { name: 'After' });
    expect(made.status).toBe(201);
    await until(() => receiver.received.length > 0, 10_000);
    const [got] = receiver.received;
    const payload = new Webhook(secret).verify(got!.body, got!.headers) as {
      id: string;
      type: string;
      data: { object: { id: string; name: string } };
    };
    expect(payload.type).toBe('instructor.created');
    expect(payload.data.object).toMatchObject({ id: (await made.json()).id, name: 'After' });
    expect(got!.headers['webhook-id']).toBe(payload.id);
    // the dispatcher's body: the event exactly as GET /v1/events/{eventId} serves it
    expect(got!.body).toBe(await (await s.mg(`/v1/events/${payload.id}`, key)).text());
    expect(await l.line(new RegExp(`instructor\\.created  ${payload.id}  -> 200 `))).toBeTruthy();

    // the receiver is down: the failure is said, the event is not retried, and the next one still goes
    receiver.stop();
    await write(key, 'POST', '/v1/instructors', { name: 'Nobody home' });
    await l.line(/instructor\.created {2}evt_\S+ {2}-> failed: .*\(not retried\)$/);
    expect(receiver.received).toHaveLength(1);
    expect(l.p.exitCode).toBeNull();
  } finally {
    l.p.kill('SIGINT');
  }
  expect(await l.p.exited).toBe(0);
  await l.line(/^Stopped: 2 event\(s\) forwarded, 1 of them failed$/);
  expect(await l.stderr).toBe('');
}, 30_000);

test('webhook:listen needs a well-formed secret key; --after forwards from an event', async () => {
  const r = await admin('webhook:listen', '--forward-to', 'http://127.0.0.1:9/x', '--key', 'svc_sk_nope');
  expect([r.code, r.out, r.err.trim()]).toEqual([1, '', expect.stringMatching(/^error: --key is not an API key/)]);
  const pk = await admin('webhook:listen', '--forward-to', 'http://127.0.0.1:9/x', '--key', demo.testKeys.publishable);
  expect([pk.code, pk.out]).toEqual([1, '']);
  expect(pk.err).toMatch(/^error: --key is a publishable key: the events feed needs a secret key with a :read scope/);
  const nokey = await admin('webhook:listen', '--forward-to', 'http://127.0.0.1:9/x');
  expect(nokey.err).toMatch(/^error: --key is required/);

  // --after: what came after that event, then what comes
  const key = demo.testKeys.secret;
  const [first] = (await feed(key)).data;
  const receiver = startReceiver();
  const l = startListen('--forward-to', receiver.url, '--key', key, '--after', first!.id);
  try {
    await until(() => receiver.received.length >= 2, 10_000);
    const ids = receiver.received.map((x) => x.headers['webhook-id']);
    expect(ids).not.toContain(first!.id);
    expect(ids.slice(0, 2)).toEqual((await feed(key)).data.slice(1, 3).map((e) => e.id));
  } finally {
    l.p.kill('SIGINT');
    await l.p.exited;
    receiver.stop();
  }
}, 30_000);

test('event:trigger class.cancelled cancels a class of the sandbox through the API; the live studio gets nothing', async () => {
  const [test, live] = [demo.testKeys.secret, demo.keys.secret];
  expect((await feed(live)).data).toEqual([]);
  const r = await admin('event:trigger', 'class.cancelled', '--key', test);
  expect([r.code, r.err]).toEqual([0, '']);
  const out = r.json();
  expect(out).toEqual({
    type: 'class.cancelled',
    request: expect.stringMatching(/^DELETE \/v1\/classes\/cls_/),
    requestId: expect.stringMatching(/^req_/),
    resourceId: expect.stringMatching(/^cls_/),
    eventId: expect.stringMatching(/^evt_/),
  });
  const events = (await feed(test, '&type=class.cancelled')).data;
  expect(events.find((e) => e.id === out.eventId)).toMatchObject({
    requestId: out.requestId,
    data: { object: { id: out.resourceId, status: 'cancelled' } },
  });
  expect((await (await s.mg(`/v1/classes/${out.resourceId}`, test)).json()).status).toBe('cancelled');
  // the live studio's feed has nothing, and the class is not one of its own
  expect((await feed(live)).data).toEqual([]);
  expect((await s.mg(`/v1/classes/${out.resourceId}`, live)).status).toBe(404);
}, 30_000);

test('event:trigger refuses a live key before any call, and names the types it can make', async () => {
  const live = demo.keys.secret;
  const cancelled = async () =>
    (
      await s.sql`select count(*)::int as n from classes where studio_id = ${demo.studio.id} and status = 'cancelled'`
    )[0]!.n;
  const before = await cancelled();
  // pointed at a receiver: any call would show there
  const receiver = startReceiver();
  try {
    for (const apiUrl of [receiver.url.replace(/\/hooks$/, ''), s.managementUrl]) {
      const r = await admin('event:trigger', 'class.cancelled', '--key', live, '--api-url', apiUrl);
      expect([r.code, r.out]).toEqual([1, '']);
      expect(r.err).toMatch(/^error: --key is a live key: event:trigger .* takes a test key/);
    }
    expect(receiver.received).toEqual([]);
  } finally {
    receiver.stop();
  }
  expect(await cancelled()).toBe(before);
  expect((await feed(live)).data).toEqual([]);
  const unknown = await admin('event:trigger', 'class.exploded', '--key', demo.testKeys.secret);
  expect(unknown.code).toBe(1);
  expect(unknown.err).toMatch(/cannot make class\.exploded happen; it can make class\.created, .*program\.updated/);
}, 30_000);

test('event:trigger makes each type it lists happen in the sandbox, each found in its feed', async () => {
  const found: Record<string, string | null> = {};
  for (const type of TRIGGER_TYPES) {
    const made = await triggerEvent(s.managementUrl, demo.testKeys.secret, type);
    expect(made).toMatchObject({ type, requestId: expect.stringMatching(/^req_/) });
    found[type] = made.eventId;
  }
  expect(Object.entries(found).filter(([, id]) => !id)).toEqual([]);
  expect(TRIGGER_TYPES.toSorted()).toEqual([...EVENT_TYPES].sort());
  expect((await feed(demo.keys.secret)).data).toEqual([]);
}, 60_000);

test("webhook:listen waits as a 429's Retry-After asks, and backs off while the feed fails", async () => {
  // an API that limits, then fails, then serves: when each call came, and what it answered
  const answers = [429, 429, 503, 200];
  const calls: number[] = [];
  const api = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      calls.push(Date.now());
      const status = answers.shift() ?? 200;
      if (status === 200) return Response.json({ data: [], next_cursor: null });
      const code = status === 429 ? 'rate_limited' : 'service_unavailable';
      return Response.json({ code, detail: 'x' }, { status, headers: status === 429 ? { 'retry-after': '1' } : {} });
    },
  });
  const stop = new AbortController();
  const said: string[] = [];
  const warned: string[] = [];
  const running = listen({
    apiUrl: `http://127.0.0.1:${api.port}`,
    key: demo.testKeys.secret,
    forwardTo: 'http://127.0.0.1:9/hook',
    signal: stop.signal,
    say: (l) => said.push(l),
    warn: (l) => warned.push(l),
  });
  try {
    await until(() => said.some((l) => l.startsWith('Listening')), 15_000);
  } finally {
    stop.abort();
    api.stop(true);
  }
  expect(await running).toEqual({ forwarded: 0, failed: 0 });
  // two waits of Retry-After's second, then the 503 said once and waited 2 s
  expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(950);
  expect(calls[2]! - calls[1]!).toBeGreaterThanOrEqual(950);
  expect(calls[3]! - calls[2]!).toBeGreaterThanOrEqual(1_950);
  expect(warned).toEqual([
    expect.stringMatching(/^warning: the events feed: .*503 service_unavailable.*; trying again in 2\.0 s$/),
  ]);
}, 30_000);
