import { dlopen, FFIType, ptr } from 'bun:ffi';
import { afterAll, describe, expect, test } from 'bun:test';
import type { AppError } from '@studio/shared';
import { Pool, parseAnswer, UpstreamError } from '../src/forward/http1';
import { type Call, forward } from '../src/forward/proxy';

/** A raw TCP server that answers each request with whatever `reply` writes, to test framing the way a service may send it. */
function rawServer(reply: (socket: Bun.Socket<{ buf: string }>, request: string) => void) {
  let connections = 0;
  const server = Bun.listen<{ buf: string }>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(s) {
        connections++;
        s.data = { buf: '' };
      },
      data(s, chunk) {
        s.data.buf += chunk.toString('latin1');
        const end = s.data.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(s.data.buf.slice(0, end))?.[1] ?? 0);
        if (s.data.buf.length < end + 4 + length) return;
        const request = s.data.buf;
        s.data.buf = '';
        reply(s, request);
      },
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, connections: () => connections, stop: () => server.stop(true) };
}

/**
 * What the hop makes of each answer a service may send (whole, as bytes after the request): `status body` when it is
 * taken, the UpstreamError's kind when it is refused. Each goes on a connection of its own, all at once.
 */
async function outcomes(answers: Record<string, string>): Promise<Record<string, string>> {
  const names = Object.keys(answers);
  const raw = rawServer((s, request) => s.write(answers[names[Number(request.split(' ')[1]!.slice(1))]!]!));
  const pool = new Pool(raw.origin);
  try {
    const each = names.map((_, i) =>
      pool.request('GET', `/${i}`, '', null, 500).then(
        (a) => `${a.status} ${text(a.body)}`,
        (err: UpstreamError) => err.kind,
      ),
    );
    return Object.fromEntries((await Promise.all(each)).map((outcome, i) => [names[i]!, outcome]));
  } finally {
    raw.stop();
    pool.close();
  }
}

/**
 * A port whose connections are never taken, like a service whose packets are dropped: a listening socket (made with
 * libc, since Bun's listeners accept at once) with a backlog of one and no accept. Once that place is filled, a
 * connect waits on the kernel's SYN retries, about two minutes.
 */
function stalledPort() {
  const libc = dlopen('libc.so.6', {
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    bind: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    listen: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    getsockname: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
  });
  const fd = libc.symbols.socket(2, 1, 0); // AF_INET, SOCK_STREAM
  const address = new Uint8Array(16); // sockaddr_in: 127.0.0.1, port 0 (any)
  address[0] = 2;
  address.set([127, 0, 0, 1], 4);
  if (libc.symbols.bind(fd, ptr(address), 16) !== 0 || libc.symbols.listen(fd, 0) !== 0) throw new Error('listen');
  libc.symbols.getsockname(fd, ptr(address), ptr(new Uint32Array([16])));
  return {
    port: (address[2]! << 8) | address[3]!,
    close() {
      libc.symbols.close(fd);
      libc.close();
    },
  };
}

const service = Bun.serve({
  port: 0,
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === '/slow') await Bun.sleep(300);
    if (url.pathname === '/echo')
      return new Response(await req.arrayBuffer(), {
        headers: { 'x-method': req.method, 'x-host': req.headers.get('host') ?? '' },
      });
    if (url.pathname === '/stream')
      return new Response(
        new ReadableStream({
          async pull(c) {
            c.enqueue(new TextEncoder().encode('ab'));
            await Bun.sleep(5);
            c.enqueue(new TextEncoder().encode('cd'));
            c.close();
          },
        }),
      );
    return Response.json(
      { path: url.pathname + url.search, auth: req.headers.get('x-test') },
      { status: url.pathname === '/created' ? 201 : 200 },
    );
  },
});
afterAll(() => service.stop(true));
const origin = `http://127.0.0.1:${service.port}`;
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('service hop (HTTP/1.1 keep-alive pool)', () => {
  test('answers with status, headers and body; connections are kept and reused', async () => {
    const pool = new Pool(origin);
    for (let i = 0; i < 5; i++) {
      const a = await pool.request('GET', `/x?i=${i}`, 'x-test: yes\r\n', null, 1000);
      expect(a.status).toBe(200);
      expect(a.headers['content-type']).toStartWith('application/json');
      expect(JSON.parse(text(a.body))).toEqual({ path: `/x?i=${i}`, auth: 'yes' });
    }
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pool.request('GET', `/p${i}`, '', null, 1000)),
    );
    expect(answers.map((a) => JSON.parse(text(a.body)).path)).toEqual(Array.from({ length: 20 }, (_, i) => `/p${i}`));
    pool.close();
  });

  test('a 1 MiB body goes out whole, however the socket takes it; Host names the service', async () => {
    const pool = new Pool(origin);
    const body = new Uint8Array(1024 * 1024).map((_, i) => i % 251);
    const a = await pool.request('POST', '/echo', 'content-type: application/octet-stream\r\n', body, 5000);
    expect(a.body.byteLength).toBe(body.byteLength);
    expect(Buffer.compare(Buffer.from(a.body), Buffer.from(body))).toBe(0);
    expect(a.headers['x-host']).toBe(`127.0.0.1:${service.port}`);
    pool.close();
  });

  test('a chunked (streamed) answer is read whole', async () => {
    const pool = new Pool(origin);
    const a = await pool.request('GET', '/stream', '', null, 1000);
    expect(text(a.body)).toBe('abcd');
    pool.close();
  });

  test('a service that does not answer in time: timeout; one that is not there: unavailable', async () => {
    const pool = new Pool(origin);
    const slow = await pool.request('GET', '/slow', '', null, 100).catch((e) => e);
    expect(slow).toBeInstanceOf(UpstreamError);
    expect((slow as UpstreamError).kind).toBe('timeout');
    // the timed-out connection is not reused: the next call is fine
    expect((await pool.request('GET', '/after', '', null, 1000)).status).toBe(200);
    pool.close();
    const gone = await new Pool('http://127.0.0.1:1').request('GET', '/', '', null, 1000).catch((e) => e);
    expect((gone as UpstreamError).kind).toBe('unavailable');
  });

  test("a service that takes no connection: timeout within the call's time limit, not the kernel's two minutes", async () => {
    const stalled = stalledPort();
    const filler = await Bun.connect({ hostname: '127.0.0.1', port: stalled.port, socket: { data() {} } });
    const pool = new Pool(`http://127.0.0.1:${stalled.port}`);
    try {
      const started = performance.now();
      const err = await pool.request('GET', '/', '', null, 300).catch((e) => e);
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).kind).toBe('timeout');
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      pool.close();
      filler.end();
      stalled.close();
    }
  });

  test('a kept connection closed under a request with no answer: a GET is sent again on a new one, a write is not', async () => {
    let requests = 0;
    const perConnection = new Map<unknown, number>();
    const raw = rawServer((s) => {
      requests++;
      const n = (perConnection.get(s) ?? 0) + 1;
      perConnection.set(s, n);
      // the second request on any connection is dropped unanswered, as a service closing it idle would
      if (n === 2) return void s.end();
      s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    const pool = new Pool(raw.origin);
    expect((await pool.request('GET', '/', '', null, 1000)).status).toBe(200);
    expect((await pool.request('GET', '/', '', null, 1000)).status).toBe(200); // dropped on the kept one, answered on a new one
    expect([requests, raw.connections()]).toEqual([3, 2]);
    const write = await pool.request('POST', '/', '', new Uint8Array([1]), 1000).catch((e) => e);
    expect((write as UpstreamError).kind).toBe('unavailable');
    expect(requests).toBe(4); // sent once, never twice
    raw.stop();
    pool.close();
  });

  test('a GET sent again is the request it was, though others went out in between', async () => {
    const perConnection = new Map<unknown, number>();
    const raw = rawServer((s, request) => {
      const n = (perConnection.get(s) ?? 0) + 1;
      perConnection.set(s, n);
      if (n === 2) return void s.end(); // the second request on any connection is dropped unanswered
      const target = request.split(' ')[1]!;
      s.write(`HTTP/1.1 200 OK\r\ncontent-length: ${target.length}\r\n\r\n${target}`);
    });
    const pool = new Pool(raw.origin);
    const get = (target: string) => pool.request('GET', target, '', null, 1000).then((a) => text(a.body));
    expect(await Promise.all([get('/warm-1'), get('/warm-2')])).toEqual(['/warm-1', '/warm-2']);
    // both go out on the kept connections, both are dropped, each is sent again on a new one
    expect(await Promise.all([get('/a'), get('/bb')])).toEqual(['/a', '/bb']);
    raw.stop();
    pool.close();
  });

  test('a kept connection the service closed while idle is forgotten, not used', async () => {
    const raw = rawServer((s) => {
      s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      setTimeout(() => s.end(), 5);
    });
    const pool = new Pool(raw.origin);
    expect((await pool.request('POST', '/', '', new Uint8Array([1]), 1000)).status).toBe(200);
    await Bun.sleep(50);
    expect((await pool.request('POST', '/', '', new Uint8Array([1]), 1000)).status).toBe(200);
    expect(raw.connections()).toBe(2);
    raw.stop();
    pool.close();
  });

  test('bytes after an answer in the same read: that call fails as upstream trouble, the next goes on a new connection', async () => {
    const evil = 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nEVIL!';
    let requests = 0;
    const raw = rawServer((s) => {
      requests++;
      const ok = `HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nok-${requests}`;
      s.write(requests === 1 ? ok + evil : ok);
    });
    const pool = new Pool(raw.origin);
    const first = await pool.request('GET', '/', '', null, 1000).catch((e) => e);
    expect(first).toBeInstanceOf(UpstreamError);
    expect((first as UpstreamError).kind).toBe('unavailable');
    const second = await pool.request('GET', '/', '', null, 1000);
    expect(text(second.body)).toBe('ok-2');
    expect([requests, raw.connections()]).toEqual([2, 2]); // the GET was not sent again; its connection was closed
    raw.stop();
    pool.close();
  });

  test('bytes arriving on an idle kept connection close it: it leaves the pool, the next call goes on a new one', async () => {
    const evil = 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nEVIL!';
    let requests = 0;
    const raw = rawServer((s) => {
      requests++;
      s.write(`HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nok-${requests}`);
      if (requests === 1) setTimeout(() => s.write(evil), 5);
    });
    const pool = new Pool(raw.origin);
    expect(text((await pool.request('GET', '/', '', null, 1000)).body)).toBe('ok-1');
    await Bun.sleep(50); // the surplus has come while the connection sat idle
    expect(text((await pool.request('GET', '/', '', null, 1000)).body)).toBe('ok-2');
    expect(raw.connections()).toBe(2);
    raw.stop();
    pool.close();
  });

  test('framing: interim 100 answers skipped, split packets, read-until-close, connection: close honoured', async () => {
    const raw = rawServer((s, req) => {
      if (req.startsWith('GET /split')) {
        s.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-le');
        setTimeout(() => s.write('ngth: 5\r\nx-a: 1\r\n\r\nhel'), 5);
        setTimeout(() => s.write('lo'), 10);
      } else if (req.startsWith('GET /close')) {
        s.write('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil close');
        setTimeout(() => s.end(), 5);
      } else {
        s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n');
        setTimeout(() => s.write('2;ext=1\r\nde\r\n0\r\n\r\n'), 5);
      }
    });
    const pool = new Pool(raw.origin);
    const split = await pool.request('GET', '/split', '', null, 1000);
    expect([split.status, text(split.body)]).toEqual([201, 'hello']);
    const closed = await pool.request('GET', '/close', '', null, 1000);
    expect(text(closed.body)).toBe('until close');
    const chunked = await pool.request('GET', '/chunks', '', null, 1000);
    expect(text(chunked.body)).toBe('abcde');
    raw.stop();
    pool.close();
  });

  test('a status line other than HTTP/1.0 or 1.1, a space, three digits 100-599, then a space or its end: refused', async () => {
    const answer = (statusLine: string) => `${statusLine}\r\ncontent-length: 2\r\n\r\nok`;
    const seen = await outcomes({
      '2000': answer('HTTP/1.1 2000 OK'),
      '20': answer('HTTP/1.1 20 OK'),
      '200OK': answer('HTTP/1.1 200OK'),
      'HTTP/2.0': answer('HTTP/2.0 200 OK'),
      'HTTP/1.2': answer('HTTP/1.2 200 OK'),
      'HTTP/1.1x': answer('HTTP/1.11 200 OK'),
      '600': answer('HTTP/1.1 600 OK'),
      '099': answer('HTTP/1.1 099 OK'),
      ICY: answer('ICY 200 OK'),
      'no reason': answer('HTTP/1.1 200'),
      'HTTP/1.0': answer('HTTP/1.0 503 Service Unavailable'),
    });
    expect(seen).toEqual({
      '2000': 'unavailable',
      '20': 'unavailable',
      '200OK': 'unavailable',
      'HTTP/2.0': 'unavailable',
      'HTTP/1.2': 'unavailable',
      'HTTP/1.1x': 'unavailable',
      '600': 'unavailable',
      '099': 'unavailable',
      ICY: 'unavailable',
      'no reason': '200 ok',
      'HTTP/1.0': '503 ok',
    });
  });

  test('a bare CR or LF, a line without a colon, a name not a token (space before the colon) or a folded line in the head: refused', async () => {
    const answer = (lines: string, statusLine = 'HTTP/1.1 200 OK') =>
      `${statusLine}\r\n${lines}content-length: 2\r\n\r\nok`;
    const seen = await outcomes({
      'CR in the status line': answer('', 'HTTP/1.1 200 O\rK'),
      'LF in the status line': answer('x-a: 1\r\n', 'HTTP/1.1 200 OK\nx-b: 2'),
      'CR in a value': answer('x-a: 1\rx-b: 2\r\n'),
      'LF in a value': answer('x-a: 1\nx-b: 2\r\n'),
      'NUL in a value': answer('x-a: 1\0\r\n'),
      'no colon': answer('x-a 1\r\n'),
      'space before the colon': answer('x-a : 1\r\n'),
      'tab before the colon': answer('x-a\t: 1\r\n'),
      'not a token': answer('x@a: 1\r\n'),
      'no name': answer(': 1\r\n'),
      'folded line': answer('x-a: 1\r\n 2\r\n'),
      'folded with a tab': answer('x-a: 1\r\n\t2\r\n'),
      'plain, with spaces and tabs about values': answer('x-a:  1 \r\nx-b:\t2\t\r\nx-c:\r\n'),
    });
    expect(seen).toEqual({
      'CR in the status line': 'unavailable',
      'LF in the status line': 'unavailable',
      'CR in a value': 'unavailable',
      'LF in a value': 'unavailable',
      'NUL in a value': 'unavailable',
      'no colon': 'unavailable',
      'space before the colon': 'unavailable',
      'tab before the colon': 'unavailable',
      'not a token': 'unavailable',
      'no name': 'unavailable',
      'folded line': 'unavailable',
      'folded with a tab': 'unavailable',
      'plain, with spaces and tabs about values': '200 ok',
    });
  });

  test('a Content-Length not all digits, two of them, one with Transfer-Encoding, or a chunk size not all hex: refused', async () => {
    const sized = (lines: string, body = 'ok') => `HTTP/1.1 200 OK\r\n${lines}\r\n${body}`;
    const chunked = (chunks: string) => `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${chunks}`;
    const seen = await outcomes({
      'length 2x': sized('content-length: 2x\r\n'),
      'length +2': sized('content-length: +2\r\n'),
      'length 0x2': sized('content-length: 0x2\r\n'),
      'length 2, 2': sized('content-length: 2, 2\r\n'),
      'length empty': sized('content-length: \r\n', ''),
      'lengths 2 and 3': sized('content-length: 2\r\ncontent-length: 3\r\n', 'ok!'),
      'length and chunked': sized('content-length: 2\r\ntransfer-encoding: chunked\r\n', '2\r\nok\r\n0\r\n\r\n'),
      'chunk 0x2': chunked('0x2\r\nok\r\n0\r\n\r\n'),
      'chunk +2': chunked('+2\r\nok\r\n0\r\n\r\n'),
      'chunk space 2': chunked(' 2\r\nok\r\n0\r\n\r\n'),
      'chunk 2 space': chunked('2 \r\nok\r\n0\r\n\r\n'),
      'chunk 2zz': chunked('2zz\r\nok\r\n0\r\n\r\n'),
      'chunk longer than its size': chunked('2\r\nokXY0\r\n\r\n'),
      'the same length twice': sized('content-length: 2\r\ncontent-length: 2\r\n'),
      'chunks in upper-case hex, an extension, trailers': chunked('A;x=1\r\n0123456789\r\n0\r\nx-t: 1\r\n\r\n'),
    });
    expect(seen).toEqual({
      'length 2x': 'unavailable',
      'length +2': 'unavailable',
      'length 0x2': 'unavailable',
      'length 2, 2': 'unavailable',
      'length empty': 'unavailable',
      'lengths 2 and 3': 'unavailable',
      'length and chunked': 'unavailable',
      'chunk 0x2': 'unavailable',
      'chunk +2': 'unavailable',
      'chunk space 2': 'unavailable',
      'chunk 2 space': 'unavailable',
      'chunk 2zz': 'unavailable',
      'chunk longer than its size': 'unavailable',
      'the same length twice': '200 ok',
      'chunks in upper-case hex, an extension, trailers': '200 0123456789',
    });
  });

  test('parseAnswer: incomplete until the last byte; garbage is refused', () => {
    const full = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc');
    for (let i = 0; i < full.length; i++) expect(parseAnswer(full.subarray(0, i), false, false)).toBeNull();
    expect(text(parseAnswer(full, false, false)!.answer.body)).toBe('abc');
    expect(
      parseAnswer(Buffer.from('HTTP/1.1 304 Not Modified\r\netag: "x"\r\n\r\n'), false, false)!.answer.status,
    ).toBe(304);
    expect(() => parseAnswer(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n'), false, false)).toThrow(UpstreamError);
  });
});

const CALLER = { studioId: 'std_1', keyId: 'key_1', scopes: [], operationId: 'op', requestId: 'req_1' };

/** The headers a service saw of each call `calls` forwarded to it over the hop. */
async function seenByService(
  calls: (send: (req: Request, call: Omit<Call, 'caller'>) => Promise<Response>) => Promise<void>,
) {
  const seen: Record<string, string>[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => (
      seen.push(req.headers.toJSON()), new Response('{}', { headers: { 'content-type': 'application/json' } })
    ),
  });
  const pool = new Pool(`http://127.0.0.1:${server.port}`);
  try {
    await calls((req, call) =>
      forward(
        req,
        { ...call, caller: CALLER },
        { pool, secret: 's'.repeat(32), timeoutMs: 5_000, bodyTimeoutMs: 5_000 },
      ),
    );
    return seen;
  } finally {
    pool.close();
    server.stop(true);
  }
}

describe('what the hop passes on of the caller', () => {
  test('only the headers a service reads cross, besides the signed ones and the trace', async () => {
    const sent = {
      accept: 'application/json',
      'content-type': 'application/json',
      'if-none-match': '"v1"',
      'idempotency-key': 'k1',
      authorization: 'Bearer svc_sk_x',
      cookie: 'session=1',
      'user-agent': 'ua',
      'x-forwarded-for': '203.0.113.7',
      'x-gw-studio': 'std_other',
      'x-custom': 'y',
    };
    const [seen] = await seenByService(async (send) => {
      await send(new Request('http://gw/v1/x', { headers: sent }), { pathAndQuery: '/v1/x' });
    });
    const names = Object.keys(seen!).filter((k) => !k.startsWith('x-gw-') && k !== 'x-request-id');
    expect(names.sort()).toEqual(['accept', 'content-type', 'host', 'idempotency-key', 'if-none-match']);
    expect(seen!['x-gw-studio']).toBe('std_1');
  });

  test('whatever headers the gateway passes on, the service takes: over its 16 KiB, the gateway refuses them itself', async () => {
    const outcomes: Record<number, number | string> = {};
    await seenByService(async (send) => {
      /** One call with an If-None-Match of `n` characters: the service's status, or the gateway's refusal. */
      const outcome = (n: number) =>
        send(new Request('http://gw/v1/x', { headers: { 'if-none-match': 'a'.repeat(n) } }), {
          pathAndQuery: '/v1/x',
        }).then(
          (res) => res.status,
          (err: AppError) => err.code,
        );
      // the longest value the gateway sends on, found by bisection
      let [lo, hi] = [1, 16 * 1024];
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (typeof (await outcome(mid)) === 'number') lo = mid;
        else hi = mid - 1;
      }
      outcomes[lo] = await outcome(lo);
      outcomes[lo + 1] = await outcome(lo + 1);
    });
    const [longest, next] = Object.values(outcomes);
    expect(longest).toBe(200);
    expect(next).toBe('request_headers_too_large');
  });
});

describe('what the hop passes on of the trace', () => {
  test("a caller's tracestate goes with its valid traceparent, and is dropped when the trace was started anew (W3C)", async () => {
    const traceparent = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    const seen = await seenByService(async (send) => {
      for (const traceRestarted of [false, true]) {
        const req = new Request('http://gw/v1/x', { headers: { tracestate: 'vendor=abc', traceparent: 'whatever' } });
        await send(req, { pathAndQuery: '/v1/x', traceparent, traceRestarted });
      }
    });
    expect(seen.map((h) => h.tracestate ?? null)).toEqual(['vendor=abc', null]);
    // the caller's own traceparent never crosses: the hop's span is the service's parent
    expect(seen.map((h) => h.traceparent)).toEqual([traceparent, traceparent]);
  });
});
