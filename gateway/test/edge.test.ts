/**
 * The edge (docs/design/edge.md) on the wire: what it answers for the bytes a caller sends, held to what Bun.serve
 * answers for the same bytes where the two must agree (the URL a request is read as, what the parser refuses).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { AppError } from '@studio/shared';
import { MAX_BODY_BYTES } from '@studio/shared/body';
import { SERVE_DEFAULTS } from '@studio/shared/io/serve';
import type { TextBuffer } from '@studio/shared/text-buffer';
import { HEAD_ROOM, HeldAnswer, keptHeaders, withHeadRoom } from '../src/edge/answer';
import { BodyAbandoned } from '../src/edge/body';
import { type EdgeRequest, lowerCaser } from '../src/edge/request';
import { EdgeParser, HEAD_MAX, HEADERS_TIMEOUT_MS, LINGER_SECONDS, serveEdge } from '../src/edge/server';

const seen: { method: string; url: string; headers: Record<string, string>; peer: string | undefined }[] = [];
const held = (body: string) =>
  new HeldAnswer(
    200,
    { 'content-type': 'application/json', etag: '"e"' },
    { 'x-request-id': 'req_1' },
    Buffer.from(body),
  );

/** A kept body with room before it, as the Storefront cache keeps one: every answer's head is written there. */
const ROOMY_BODY = withHeadRoom(Buffer.from('kept body '.repeat(100)));

/** A representation's own headers, as the Storefront cache keeps them (a framing header among them, to be left out). */
const KEPT_OWN = keptHeaders({
  'content-type': 'application/json',
  etag: 'W/"k"',
  vary: 'Authorization, Accept-Encoding',
  'content-length': '999',
});

/** A body longer than the edge's 64 KiB buffer. */
const BIG_BODY = Buffer.from('0123456789'.repeat(10_000));

/** Answers by path: held at once, held later, a Response later, a throw, a 304; everything it is asked is noted. */
function handler(req: EdgeRequest, server: { requestIP(r: unknown): { address: string } | null }) {
  const headers: Record<string, string> = {};
  req.headers.forEach((v, k) => (headers[k] = v));
  seen.push({ method: req.method, url: req.url, headers, peer: server.requestIP(req)?.address });
  const path = req.url.replace(/^http:\/\/[^/]*/, '').replace(/[?#].*/, '');
  if (path.startsWith('/slow/'))
    return Bun.sleep(Number(path.slice(6))).then(() => held(JSON.stringify({ slow: path })));
  if (path === '/response')
    return Promise.resolve(new Response('{"r":1}', { status: 201, headers: { 'content-type': 'application/json' } }));
  if (path === '/throw') throw new Error('handler failed');
  if (path === '/not-modified') return new HeldAnswer(304, { etag: '"e"' }, null, null);
  if (path === '/close') return new Response('bye', { headers: { connection: 'close' } });
  if (path === '/big-head')
    return new HeldAnswer(200, { 'x-big': 'b'.repeat(70_000) }, { 'x-request-id': 'r' }, ROOMY_BODY);
  if (path === '/big-body') return new HeldAnswer(200, { 'content-type': 'text/plain' }, null, BIG_BODY);
  if (path === '/roomy')
    return new HeldAnswer(200, { 'content-type': 'text/plain' }, { 'x-echo': headers['x-echo'] ?? '' }, ROOMY_BODY);
  if (path === '/kept') {
    const extra: Record<string, string> = { 'x-request-id': 'r' };
    if (headers['x-vary']) extra.vary = headers['x-vary'];
    return new HeldAnswer(200, KEPT_OWN, extra, ROOMY_BODY);
  }
  return held(JSON.stringify({ path }));
}

const edge = serveEdge({ hostname: '127.0.0.1', port: 0, idleTimeout: 30, fetch: handler });

/** What the body reader was refused with, by the request's path. */
const bodyFailures = new Map<string, unknown>();
/**
 * The Management port's way with bodies: `/refuse` answers without reading its body; any other path reads it (within
 * 300 ms on `/quick`, 20 s on `/slow-body`, else 5 s) and echoes it, or answers the refusal's status.
 */
function bodyHandler(req: EdgeRequest) {
  const path = req.url.replace(/^http:\/\/[^/]*/, '');
  if (path === '/refuse') return held('{"refused":true}');
  if (!req.body) return held(JSON.stringify({ body: null }));
  const deadline = path === '/quick' ? 300 : path === '/slow-body' ? 20_000 : 5_000;
  return req.body.read(deadline).then(
    (bytes) => held(JSON.stringify({ body: Buffer.from(bytes).toString() })),
    (err) => {
      bodyFailures.set(path, err);
      return new Response(err instanceof AppError ? err.code : 'abandoned', {
        status: err instanceof AppError ? err.status : 499,
        headers: err instanceof AppError ? (err.options.headers ?? {}) : {},
      });
    },
  );
}
const bodyEdge = serveEdge({ hostname: '127.0.0.1', port: 0, idleTimeout: 30, bodies: true, fetch: bodyHandler });
const bun = Bun.serve({ ...SERVE_DEFAULTS, hostname: '127.0.0.1', port: 0, fetch: (req) => new Response(req.url) });
afterAll(async () => {
  await edge.stop(true);
  await bodyEdge.stop(true);
  await bun.stop(true);
});

/** Sends `bytes` on a fresh connection (in pieces `pause` ms apart when given several) and returns all it hears until closed or `waitMs` passes. */
async function raw(port: number, parts: string[], waitMs = 400, pause = 0): Promise<{ text: string; closed: boolean }> {
  let text = '';
  let closed = false;
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data: (_s, d) => void (text += d.toString('latin1')),
      close: () => void (closed = true),
      error: () => void (closed = true),
    },
  });
  for (const part of parts) {
    socket.write(part);
    if (pause) await Bun.sleep(pause);
  }
  const until = Date.now() + waitMs;
  while (!closed && Date.now() < until) await Bun.sleep(10);
  const heard = { text, closed }; // before end(), which may report the close at once
  socket.end();
  return heard;
}

const answers = (text: string) => text.split(/(?=HTTP\/1\.1 )/).filter(Boolean);
const statusOf = (answer: string) => Number(answer.slice(9, 12));

describe('the edge', () => {
  test('the binding it is built on is there, as Node defines it (a Bun upgrade that changes it fails here)', () => {
    expect(EdgeParser.REQUEST).toBe(1);
    expect([EdgeParser.kOnHeaders, EdgeParser.kOnHeadersComplete]).toEqual([1, 2]);
    const p = new EdgeParser();
    p.initialize(EdgeParser.REQUEST, {}, HEAD_MAX, 0);
    const got: unknown[] = [];
    p[EdgeParser.kOnHeadersComplete] = (...a: unknown[]) => void got.push(a.slice(0, 5), a[7], a[8]);
    expect(p.execute(Buffer.from('GET /a?b HTTP/1.1\r\nHost: x\r\n\r\n'))).toBe(30);
    expect(got).toEqual([[1, 1, ['Host', 'x'], 1, '/a?b'], false, true]);
    // the head's writer and the access lines': Buffer's latin1Write and utf8Write, Node's and Bun's own, undocumented
    const b = Buffer.alloc(6) as TextBuffer;
    expect(b.latin1Write('ab\u00e9', 2)).toBe(3);
    expect([...b]).toEqual([0, 0, 97, 98, 0xe9, 0]);
    expect(b.utf8Write('a\u00e9', 1)).toBe(3);
    expect([...b]).toEqual([0, 97, 0xc3, 0xa9, 0xe9, 0]);
  });

  test("a held answer is written with its headers, the gateway's over the representation's, Date and Content-Length", async () => {
    const { text } = await raw(edge.port, ['GET /a HTTP/1.1\r\nHost: h\r\n\r\n']);
    const [head, body] = text.split('\r\n\r\n');
    expect(head).toStartWith('HTTP/1.1 200 OK\r\n');
    expect(head).toContain('\r\nx-request-id: req_1');
    expect(head).toContain('\r\ncontent-type: application/json');
    expect(head).toContain(`\r\ncontent-length: ${body!.length}`);
    expect(head).toMatch(/\r\ndate: \w{3}, \d\d \w{3} \d{4} /);
    expect(JSON.parse(body!)).toEqual({ path: '/a' });
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: 'http://h/a', peer: '127.0.0.1' });
  });

  test('a kept body is sent from where it lies, its head written in the room before it: answers one after another, pipelined or with a head too long for the room, each whole and its own', async () => {
    const one = (echo: string) => `GET /roomy HTTP/1.1\r\nHost: h\r\nX-Echo: ${echo}\r\n\r\n`;
    const long = 'l'.repeat(HEAD_ROOM);
    const { text } = await raw(edge.port, [
      one('first') +
        one('second, a longer one') +
        one(long) +
        one('x') +
        'GET /slow/50 HTTP/1.1\r\nHost: h\r\n\r\n' +
        one('after a slow one') +
        one('and another'),
    ]);
    const a = answers(text);
    expect(a.map(statusOf)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    // the last two wait together for the slow one: each holds its own bytes, not the room both were written in
    for (const [i, echo] of [
      [0, 'first'],
      [1, 'second, a longer one'],
      [2, long],
      [3, 'x'],
      [5, 'after a slow one'],
      [6, 'and another'],
    ] as const) {
      expect(a[i]).toContain(`\r\nx-echo: ${echo}\r\n`);
      expect(a[i]!.split('\r\n\r\n')[1]).toBe('kept body '.repeat(100));
    }
  });

  test("a representation's kept headers are written as on its first answer on every one, unless the gateway's replace one of them", async () => {
    const kept = 'GET /kept HTTP/1.1\r\nHost: h\r\n\r\n';
    const { text } = await raw(edge.port, [
      kept + kept + 'GET /kept HTTP/1.1\r\nHost: h\r\nX-Vary: Origin\r\n\r\n' + kept,
    ]);
    const heads = answers(text).map((a) => a.split('\r\n\r\n')[0]!.replace(/\r\ndate: [^\r]*/, ''));
    const own = 'content-type: application/json\r\netag: W/"k"\r\n';
    const plain = `HTTP/1.1 200 OK\r\n${own}vary: Authorization, Accept-Encoding\r\nx-request-id: r\r\ncontent-length: 1000`;
    expect(heads).toEqual([
      plain,
      plain,
      `HTTP/1.1 200 OK\r\n${own}x-request-id: r\r\nvary: Origin\r\ncontent-length: 1000`,
      plain,
    ]);
  });

  test("an answer longer than the edge's 64 KiB buffer, by its head or by its body, is written whole", async () => {
    const { text } = await raw(edge.port, [
      'GET /big-head HTTP/1.1\r\nHost: h\r\n\r\nGET /big-body HTTP/1.1\r\nHost: h\r\n\r\nGET /a HTTP/1.1\r\nHost: h\r\n\r\n',
    ]);
    const [bigHead, bigBody, after] = answers(text);
    expect(bigHead).toContain(`\r\nx-big: ${'b'.repeat(70_000)}\r\nx-request-id: r\r\n`);
    expect(bigHead!.split('\r\n\r\n')[1]).toBe('kept body '.repeat(100));
    expect(bigBody).toContain(`\r\ncontent-length: ${BIG_BODY.byteLength}\r\n`);
    expect(bigBody!.split('\r\n\r\n')[1]).toBe(BIG_BODY.toString());
    expect(after).toContain('{"path":"/a"}');
  });

  test('pipelined requests are answered in the order they came, a slow one holding back the quick ones after it', async () => {
    const { text } = await raw(edge.port, [
      'GET /slow/150 HTTP/1.1\r\nHost: h\r\n\r\nGET /response HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n',
    ]);
    const a = answers(text);
    expect(a.map(statusOf)).toEqual([200, 201, 200]);
    expect(a[0]).toContain('/slow/150');
    expect(a[1]).toEndWith('{"r":1}');
    expect(a[2]).toContain('{"path":"/b"}');
  });

  test('held answers that come later, in any order, are each written whole and their own: the one whose turn it is at once, the ones behind it kept', async () => {
    const slow = (ms: number) => `GET /slow/${ms} HTTP/1.1\r\nHost: h\r\n\r\n`;
    const { text } = await raw(edge.port, [slow(120) + slow(10) + slow(60) + slow(30) + slow(150)], 600);
    const a = answers(text);
    expect(a.map(statusOf)).toEqual([200, 200, 200, 200, 200]);
    expect(a.map((x) => x.split('\r\n\r\n')[1])).toEqual(
      [120, 10, 60, 30, 150].map((ms) => JSON.stringify({ slow: `/slow/${ms}` })),
    );
  });

  test('HEAD: the headers and the length of the body, no body; a 304 has neither', async () => {
    const { text } = await raw(edge.port, [
      'HEAD /abc HTTP/1.1\r\nHost: h\r\n\r\nGET /not-modified HTTP/1.1\r\nHost: h\r\n\r\nGET /z HTTP/1.1\r\nHost: h\r\n\r\n',
    ]);
    const a = answers(text);
    expect(a.map(statusOf)).toEqual([200, 304, 200]);
    expect(a[0]).toContain(`content-length: ${'{"path":"/abc"}'.length}\r\n`);
    expect(a[0]).toEndWith('\r\n\r\n');
    expect(a[1]).not.toContain('content-length');
    expect(a[1]).toEndWith('\r\n\r\n');
    expect(a[2]).toEndWith('{"path":"/z"}');
  });

  test('a handler that throws is a 500 problem, the connection kept', async () => {
    const { text, closed } = await raw(edge.port, [
      'GET /throw HTTP/1.1\r\nHost: h\r\n\r\nGET /q HTTP/1.1\r\nHost: h\r\n\r\n',
    ]);
    const a = answers(text);
    expect(a.map(statusOf)).toEqual([500, 200]);
    expect(a[0]).toContain('application/problem+json');
    expect(a[0]).not.toContain('handler failed');
    expect(closed).toBe(false);
  });

  test("Connection: close, HTTP/1.0, an answer's own Connection: close and a request with a body end the connection after its answer; nothing after it is served", async () => {
    for (const request of [
      'GET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
      'GET /c HTTP/1.0\r\nHost: h\r\n\r\n',
      'GET /close HTTP/1.1\r\nHost: h\r\n\r\n',
      'GET /c HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello',
      'GET /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    ]) {
      const { text, closed } = await raw(edge.port, [`${request}GET /after HTTP/1.1\r\nHost: h\r\n\r\n`]);
      expect([request, closed, answers(text).length]).toEqual([request, true, 1]);
      expect(text).toContain('connection: close');
      expect(text).not.toContain('/after');
    }
  });

  test("what llhttp refuses is Bun.serve's bare 400 (431 past 16 KiB of head), after the answers owed, and the connection closed", async () => {
    // what Bun.serve answers the same bytes: the same, but for an unknown method (the connection closed, no answer)
    // and a byte above 0x7e in the target (percent-encoded and served)
    const cases: [string, number, number][] = [
      ['BREW / HTTP/1.1\r\nHost: h\r\n\r\n', 400, 0],
      ['GET /\u00e9 HTTP/1.1\r\nHost: h\r\n\r\n', 400, 200],
      ['GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n', 400, 400],
      ['GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', 400, 400],
      ['GET / HTTP/1.1\r\nHost: h\r\nX-A: a\0b\r\n\r\n', 400, 400],
      ['GET / HTTP/1.1\r\n\r\n', 400, 400], // no Host
      ['OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n', 400, 400],
      ['GET nope HTTP/1.1\r\nHost: h\r\n\r\n', 400, 400],
      [`GET / HTTP/1.1\r\nHost: h\r\nX-Big: ${'a'.repeat(HEAD_MAX)}\r\n\r\n`, 431, 431],
    ];
    for (const [request, status, bunStatus] of cases) {
      const ours = await raw(edge.port, [`GET /first HTTP/1.1\r\nHost: h\r\n\r\n${request}`]);
      const theirs = await raw(bun.port!, [request]);
      const a = answers(ours.text);
      expect([request.slice(0, 40), a.map(statusOf), ours.closed]).toEqual([request.slice(0, 40), [200, status], true]);
      expect(a[1]).toEndWith('\r\n\r\n'); // no body: nothing of the process in it
      expect([request.slice(0, 40), statusOf(theirs.text) || 0]).toEqual([request.slice(0, 40), bunStatus]);
    }
  });

  test('a request is read as the URL Bun.serve reads it: the target normalised, the Host in front or not at all', async () => {
    const targets = [
      '/v1/classes?limit=2',
      '/v1/classes/..',
      '/a/./b',
      '//x/y',
      '/a/%2e%2e/b',
      '/a/b/../../../c',
      'http://other:1/z?q',
      '/a?x=/../y',
      "/a?q='<>",
      '/a#f',
      '/a\\b',
      '/a%20b',
    ];
    const hosts = ['h:1', '', 'a/b', '[', 'a b', 'x.example:8080'];
    for (const host of hosts)
      for (const target of targets) {
        const request = `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
        const theirs = (await raw(bun.port!, [request], 200)).text.split('\r\n\r\n')[1];
        await raw(edge.port, [request], 200);
        expect([host, target, seen.at(-1)!.url]).toEqual([host, target, theirs!]);
      }
  });

  test('headers: names lower-cased, a repeated one joined by ", ", in one piece or many (a head over 32 headers, sent in pieces)', async () => {
    let lines = '';
    for (let i = 0; i < 40; i++) lines += `X-H${i}: v${i}\r\n`;
    const request = `GET /many HTTP/1.1\r\nHost: h\r\nAccept: a\r\n${lines}Accept: b\r\n\r\n`;
    const { text } = await raw(edge.port, [request.slice(0, 25), request.slice(25, 200), request.slice(200)], 400, 30);
    expect(statusOf(text)).toBe(200);
    const got = seen.at(-1)!;
    expect(got.url).toBe('http://h/many');
    expect(got.headers.accept).toBe('a, b');
    expect(got.headers['x-h39']).toBe('v39');
    expect(Object.keys(got.headers)).toHaveLength(42);
  });

  test('headers: a repeated name among a few is given once, in the order first sent, with its values joined', async () => {
    const request = 'GET /few HTTP/1.1\r\nAccept: a\r\nHost: h\r\nX-One: 1\r\naccept: b\r\nACCEPT: c\r\n\r\n';
    const { text } = await raw(edge.port, [request]);
    expect(statusOf(text)).toBe(200);
    const got = seen.at(-1)!;
    expect(got.url).toBe('http://h/few');
    expect(Object.entries(got.headers)).toEqual([
      ['accept', 'a, b, c'],
      ['host', 'h'],
      ['x-one', '1'],
    ]);
  });

  test('a name is lower-cased the same whether it is one of the names remembered or past them', () => {
    const lower = lowerCaser(2);
    const names = [
      'Host',
      'X-Echo',
      'Accept-Encoding',
      'Host',
      'x-echo',
      'ÄBC',
      ...Array.from({ length: 300 }, (_, i) => `X-N${i}`),
    ];
    expect(names.map(lower)).toEqual(names.map((n) => n.toLowerCase()));
  });

  test(`a head that has not arrived whole within ${HEADERS_TIMEOUT_MS / 1000} s ends its connection, however its bytes trickle in; a body is not held to it`, async () => {
    const started = Date.now();
    const slowloris = async (port: number) => {
      let closed = false;
      const socket = await Bun.connect({
        hostname: '127.0.0.1',
        port,
        socket: { data() {}, close: () => void (closed = true) },
      });
      socket.write('GET / HTTP/1.1\r\nHost: h\r\n');
      for (let i = 0; !closed && i < 30; i++) {
        await Bun.sleep(500);
        socket.write(`X-${i}: a\r\n`);
      }
      return { closed, took: Date.now() - started };
    };
    // a body a byte every half second (about 12 s) after a whole head: the head's 10 s do not apply to it
    const body = 'x'.repeat(24);
    const slowBody = raw(
      bodyEdge.port,
      [`POST /slow-body HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.length}\r\n\r\n`, ...body],
      1_000,
      500,
    );
    const [plain, reading, bodied] = await Promise.all([slowloris(edge.port), slowloris(bodyEdge.port), slowBody]);
    for (const { closed, took } of [plain, reading]) {
      expect(closed).toBe(true);
      expect(took).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
      expect(took).toBeLessThan(HEADERS_TIMEOUT_MS + 2_500);
    }
    expect(bodied.closed).toBe(false);
    expect(answers(bodied.text).map(statusOf)).toEqual([200]);
    expect(bodied.text).toEndWith(JSON.stringify({ body }));
  }, 20_000);

  test('a pipelined flood is read only as fast as its answers are taken: reading stops while 64 are owed', async () => {
    const total = 20_000;
    const before = seen.length;
    const client = connect(edge.port, '127.0.0.1');
    client.on('data', () => {});
    client.write('GET /slow/500 HTTP/1.1\r\nHost: h\r\n\r\n'.repeat(total));
    await Bun.sleep(250);
    // none answered yet: what was read is what the first reads held, the rest waits in the socket
    const read = seen.length - before;
    client.destroy();
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(total / 4);
  });

  test(`a connection that sent its FIN reads what its client still sends (a reset would lose the answer), ${LINGER_SECONDS} s or so at most`, async () => {
    // a client that never closes and never stops sending a body the port does not read
    const started = Date.now();
    let text = '';
    let error: string | undefined;
    let finAt = 0;
    const closedAt = await new Promise<number>((resolve) => {
      const client = connect({ port: edge.port, host: '127.0.0.1', allowHalfOpen: true }, () => {
        client.write('POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000\r\n\r\n');
        const sending = setInterval(() => client.writable && client.write('x'.repeat(100)), 100);
        client.on('close', () => {
          clearInterval(sending);
          resolve(Date.now());
        });
      });
      client.on('data', (d: Buffer) => (text += d.toString('latin1')));
      client.on('end', () => (finAt = Date.now()));
      client.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code));
    });
    expect(answers(text).map(statusOf)).toEqual([200]);
    expect(text).toContain('connection: close');
    expect(finAt - started).toBeLessThan(1_000); // the FIN right after the answer
    // still read after it: the reset, if any, only once the lingering is over (Bun's socket timer ticks every 4 s, so
    // 5 s is two ticks: 4 to 8 s)
    expect(closedAt - finAt).toBeGreaterThanOrEqual(3_900);
    expect(closedAt - finAt).toBeLessThan(8_500);
    expect([undefined, 'ECONNRESET', 'EPIPE']).toContain(error);
  }, 15_000);

  test('stop: no new connection; an idle one closes at once, a busy one after its answer', async () => {
    const other = serveEdge({ hostname: '127.0.0.1', port: 0, idleTimeout: 30, fetch: handler });
    const idle = await raw(other.port, ['GET /a HTTP/1.1\r\nHost: h\r\n\r\n'], 50);
    expect(statusOf(idle.text)).toBe(200);
    let text = '';
    let closed = false;
    const busy = await Bun.connect({
      hostname: '127.0.0.1',
      port: other.port,
      socket: { data: (_s, d) => void (text += d.toString()), close: () => void (closed = true) },
    });
    busy.write('GET /slow/300 HTTP/1.1\r\nHost: h\r\n\r\n');
    await Bun.sleep(50);
    await other.stop();
    await Bun.sleep(50); // the client hears the close a moment after the server made it
    expect(closed).toBe(true);
    expect(statusOf(text)).toBe(200);
    expect(text).toContain('/slow/300');
    expect(await fetch(`http://127.0.0.1:${other.port}/a`).catch(() => 'refused')).toBe('refused');
  });
});

describe('the edge reading bodies (the Management port)', () => {
  test('a body by Content-Length or in chunks is read whole, in pieces or pipelined, the connection kept', async () => {
    const { text, closed } = await raw(
      bodyEdge.port,
      [
        'POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello',
        ' world',
        'POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n',
        '2\r\nde\r\n0\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\nPUT /d HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n',
      ],
      400,
      50,
    );
    const a = answers(text);
    expect(a.map(statusOf)).toEqual([200, 200, 200, 200]);
    expect(a[0]).toEndWith('{"body":"hello world"}');
    expect(a[1]).toEndWith('{"body":"abcde"}');
    expect(a[2]).toEndWith('{"body":null}');
    expect(a[3]).toEndWith('{"body":null}');
    expect(closed).toBe(false);
  });

  test('Expect: 100-continue is answered before the body is sent, and the answer follows it', async () => {
    const { text } = await raw(
      bodyEdge.port,
      ['POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n', 'ok'],
      300,
      100,
    );
    const a = answers(text);
    expect(a[0]).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    expect(statusOf(a[1]!)).toBe(200);
    expect(a[1]).toEndWith('{"body":"ok"}');
  });

  test('a body over 1 MiB is 413, declared (nothing read, no 100 Continue) or counted as its chunks come; the connection ends after the answer', async () => {
    const declared = await raw(bodyEdge.port, [
      `POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\nExpect: 100-continue\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n`,
    ]);
    expect(answers(declared.text).map(statusOf)).toEqual([413]);
    expect(declared.text).toContain('connection: close');
    expect(declared.closed).toBe(true);
    const chunk = `${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`;
    const counted = await raw(bodyEdge.port, [
      'POST /big-chunked HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n',
      ...Array(17).fill(chunk),
    ]);
    expect(answers(counted.text).map(statusOf)).toEqual([413]);
    expect(counted.closed).toBe(true);
    expect((bodyFailures.get('/big-chunked') as AppError).code).toBe('payload_too_large');
  });

  test('an answer given without reading the body waits for the rest of it, and the connection goes on', async () => {
    const { text, closed } = await raw(
      bodyEdge.port,
      [
        'POST /refuse HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n01234',
        '56789GET /after HTTP/1.1\r\nHost: h\r\n\r\n',
      ],
      300,
      100,
    );
    expect(answers(text).map(statusOf)).toEqual([200, 200]);
    expect(text).toContain('{"refused":true}');
    expect(closed).toBe(false);
  });

  test('a body that takes longer than its deadline is 408, the connection closed; a client gone mid-body is told apart', async () => {
    const slow = await raw(
      bodyEdge.port,
      ['POST /quick HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0', '1', '2', '3', '4', '5'],
      300,
      100,
    );
    expect(answers(slow.text).map(statusOf)).toEqual([408]);
    expect(slow.text).toContain('connection: close');
    expect(slow.closed).toBe(true);
    const socket = await Bun.connect({ hostname: '127.0.0.1', port: bodyEdge.port, socket: { data() {} } });
    socket.write('POST /gone HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n01');
    await Bun.sleep(50);
    socket.end();
    for (let i = 0; i < 50 && !bodyFailures.has('/gone'); i++) await Bun.sleep(10);
    expect(bodyFailures.get('/gone')).toBeInstanceOf(BodyAbandoned);
  });

  test("a chunked body llhttp cannot read is the request's 400 malformed_request, then the bare 400, and the end", async () => {
    const { text, closed } = await raw(bodyEdge.port, [
      'POST /bad HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n',
    ]);
    expect(answers(text).map(statusOf)).toEqual([400]);
    expect(text).toEndWith('malformed_request');
    expect(closed).toBe(true);
  });
});
