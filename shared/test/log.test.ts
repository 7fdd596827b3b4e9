import { afterEach, beforeEach, expect, spyOn, test } from 'bun:test';
import { type LogLevel, log, setLogLevel } from '@studio/shared';

// each test starts at info and leaves the level as it found it (the suite runs at warn: test/preload.ts)
let before: LogLevel;
beforeEach(() => (before = setLogLevel('info')));
afterEach(() => setLogLevel(before));

/** The access lines a script run in a process of its own writes (each parsed: one JSON object a line). */
async function linesOf(script: string) {
  const child = Bun.spawn(['bun', '-e', script], { cwd: import.meta.dir, stdout: 'pipe' });
  const lines = (await new Response(child.stdout).text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(await child.exited).toBe(0);
  return lines;
}

test('LOG_LEVEL is honoured: lines below the level are not written; warnings and errors go to stderr', () => {
  const out = spyOn(console, 'log').mockImplementation(() => {});
  const err = spyOn(console, 'error').mockImplementation(() => {});
  try {
    setLogLevel('warn');
    log('debug', 'd');
    log('info', 'i');
    log('warn', 'w');
    log('error', 'e');
    expect(out).not.toHaveBeenCalled();
    expect(err.mock.calls.map(([line]) => JSON.parse(String(line)).msg)).toEqual(['w', 'e']);
    expect(setLogLevel('debug')).toBe('warn'); // and says what it replaced, so a test can put it back
    log('debug', 'd2', { requestId: 'req_1' });
    expect(JSON.parse(String(out.mock.calls[0]![0]))).toMatchObject({ level: 'debug', msg: 'd2', requestId: 'req_1' });
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
});

test('an access line is one valid JSON object whatever the caller put in its path, method or headers', async () => {
  const path = '/v1/x"y\\z\n\u0000é\u2028';
  const script = `
    import { flushLogs, logRequest, setLogLevel, setLogProcess } from '@studio/shared';
    setLogLevel('info');
    setLogProcess('gateway');
    const f = JSON.parse(process.argv[1]);
    logRequest(f);
    logRequest({ ...f, problem: 'not_found', requestId: null, keyId: null });
    flushLogs();`;
  const fields = {
    requestId: 'req_"1',
    traceId: 'abc',
    surface: 'management',
    operation: 'managementListMembers',
    method: 'GE\tT',
    path,
    status: 200,
    durationMs: 1.25,
    keyId: 'key_\\1',
  };
  const child = Bun.spawn(['bun', '-e', script, JSON.stringify(fields)], { cwd: import.meta.dir, stdout: 'pipe' });
  const lines = (await new Response(child.stdout).text()).trim().split('\n');
  expect(await child.exited).toBe(0);
  const [first, second] = lines.map((l) => JSON.parse(l));
  expect(first).toEqual({ level: 'info', time: first.time, service: 'gateway', msg: 'request', ...fields });
  expect(new Date(first.time).toISOString()).toBe(first.time);
  expect(second).toMatchObject({ path, problem: 'not_found', requestId: null, keyId: null });
});

test("at LOG_LEVEL=warn a server error's access line is still written, at level error; other access lines are not", async () => {
  const script = `
    import { flushLogs, logRequest, setLogLevel } from '@studio/shared';
    setLogLevel('warn');
    const f = { requestId: 'r', traceId: null, surface: 'management', operation: 'x', method: 'GET', path: '/v1/x', durationMs: 1, keyId: null };
    for (const status of [200, 404, 503, 504]) logRequest({ ...f, status });
    flushLogs();`;
  const lines = await linesOf(script);
  expect(lines.map((l) => [l.level, l.status])).toEqual([
    ['error', 503],
    ['error', 504],
  ]);
});

test('access lines come out whole and in order past a full queue and several writes; a long path is cut to 512', async () => {
  // 1,300 lines: the queue (512) fills twice and the text passes a write (64 K) several times; one path of 100,000
  // characters (a keyless caller's to send) keeps its first 512, as an activity entry does
  const script = `
    import { flushLogs, logRequest, setLogLevel, setLogProcess } from '@studio/shared';
    setLogLevel('info');
    setLogProcess('gateway');
    for (let i = 0; i < 1300; i++)
      logRequest({ requestId: 'req_' + i, traceId: null, surface: 'storefront', operation: 'unknown', method: 'GET',
        path: i === 700 ? '/' + 'x'.repeat(100000) : '/v1/' + i, status: 200, durationMs: i / 100, keyId: null });
    flushLogs(); // as a process does when it drains`;
  const child = Bun.spawn(['bun', '-e', script], { cwd: import.meta.dir, stdout: 'pipe' });
  const lines = (await new Response(child.stdout).text()).trim().split('\n');
  expect(await child.exited).toBe(0);
  expect(lines.length).toBe(1300);
  const parsed = lines.map((l) => JSON.parse(l));
  expect(parsed.map((l) => l.requestId)).toEqual(Array.from({ length: 1300 }, (_, i) => `req_${i}`));
  expect(parsed[700].path).toBe(`/${'x'.repeat(511)}`);
  expect(parsed[1299]).toMatchObject({ path: '/v1/1299', durationMs: 12.99 });
});

test("lines that change method and key id from one to the next keep each its own; a process's own ids are written as made", async () => {
  // a batch's lines mostly repeat their method and key id: a change from one line to the next must show
  const script = `
    import { flushLogs, logRequest, newRequestId, setLogLevel } from '@studio/shared';
    import { startTrace } from '@studio/shared';
    setLogLevel('info');
    const keys = ['key_a', 'key_a', 'key_"b\\\\', null, 'key_a'];
    const methods = ['GET', 'GET', 'GE\\tT', 'POST', 'GET'];
    for (let i = 0; i < 5; i++)
      logRequest({ requestId: newRequestId(), traceId: startTrace(null).traceId, surface: 'management', operation: 'x',
        method: methods[i], path: '/v1/x', status: 200, durationMs: 1, keyId: keys[i], ownIds: true });
    flushLogs();`;
  const lines = await linesOf(script);
  expect(lines.map((l) => [l.method, l.keyId])).toEqual([
    ['GET', 'key_a'],
    ['GET', 'key_a'],
    ['GE\tT', 'key_"b\\'],
    ['POST', null],
    ['GET', 'key_a'],
  ]);
  for (const l of lines) {
    expect(l.requestId).toMatch(/^req_[0-9A-Za-z]+$/);
    expect(l.traceId).toMatch(/^[0-9a-f]{32}$/);
  }
});

test('a duration is written as JSON writes the number; a line longer than the 64 KB buffer comes out whole, in order', async () => {
  const durations = [0, 0.07, 0.5, 1.1, 3, 12.5, 99.99, 100.25, 1234567.01, 0.1 + 0.2, 1e21, 5e-324];
  // a line whose bytes may pass the 64 KB buffer (a caller's 16 KiB header of control characters is 96 KB as JSON)
  // takes a buffer of its own: here a request id of 70,000 characters
  const script = `
    import { flushLogs, logRequest, setLogLevel } from '@studio/shared';
    setLogLevel('info');
    const durations = JSON.parse(process.argv[1]);
    durations.forEach((durationMs, i) =>
      logRequest({ requestId: i === 3 ? 'r'.repeat(70000) : 'r' + i, traceId: null, surface: 'management',
        operation: 'x', method: 'GET', path: '/v1/x', status: 200 + i, durationMs, keyId: null }));
    flushLogs();`;
  const child = Bun.spawn(['bun', '-e', script, JSON.stringify(durations)], { cwd: import.meta.dir, stdout: 'pipe' });
  const text = (await new Response(child.stdout).text()).trim().split('\n');
  expect(await child.exited).toBe(0);
  expect(text.map((l) => /"durationMs":([^,]+),/.exec(l)?.[1])).toEqual(durations.map((d) => JSON.stringify(d)));
  const lines = text.map((l) => JSON.parse(l));
  expect(lines.map((l) => l.status)).toEqual(durations.map((_, i) => 200 + i));
  expect(lines[3].requestId).toBe('r'.repeat(70000));
});
