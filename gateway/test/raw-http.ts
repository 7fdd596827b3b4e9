/**
 * HTTP/1.1 on a raw socket, for tests that send what no fetch sends (pipelined requests, trailers, HTTP/1.0 with
 * chunks, requests never read): a connection that keeps every byte it hears and says when it closed, and a reader of
 * the answers in those bytes. Depends on no server of ours: it holds any port to the wire alone.
 */
import { connect, type Socket } from 'node:net';

/** One answer read off the wire. */
export interface RawAnswer {
  status: number;
  /** Header names lower-cased; a name sent twice has its values joined by `, `. */
  headers: Record<string, string>;
  body: string;
}

/** A client connection to 127.0.0.1:`port`, every byte heard kept. */
export class RawConnection {
  private chunks: Buffer[] = [];
  heard = 0;
  closed = false;
  /** When the server closed it (ms since the epoch); 0 while open. */
  closedAt = 0;
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.chunks.push(d);
      this.heard += d.byteLength;
      this.wake();
    });
    const gone = () => {
      if (!this.closed) this.closedAt = Date.now();
      this.closed = true;
      this.wake();
    };
    socket.on('close', gone);
    socket.on('end', gone);
    socket.on('error', gone);
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, noDelay: true });
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Writes `data` (latin1 when text); resolves once the socket took it. */
  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.socket.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data, () => resolve());
    });
  }

  /** Everything heard so far, as latin1 text. */
  get text(): string {
    return Buffer.concat(this.chunks).toString('latin1');
  }

  /** The whole answers heard so far. */
  answers(): RawAnswer[] {
    return parseAnswers(Buffer.concat(this.chunks)).answers;
  }

  /** Waits until `done()` holds, the server closes, or `ms` pass; returns whether `done()` held. */
  async until(done: () => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!done() && !this.closed && Date.now() < deadline)
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    return done();
  }

  /** Waits for `n` whole answers (or the close, or `ms`), then returns the answers heard. */
  async read(n: number, ms = 5_000): Promise<RawAnswer[]> {
    await this.until(() => this.answers().length >= n, ms);
    return this.answers();
  }

  /** Waits for the server to close the connection (or `ms`); returns whether it did. */
  async closedWithin(ms: number): Promise<boolean> {
    await this.until(() => this.closed, ms);
    return this.closed;
  }

  close() {
    this.socket.destroy();
  }
}

/**
 * The answers whole in `bytes`, in order, and where the unfinished rest begins: framed by Content-Length, chunked,
 * or no body (1xx, 204, 304, or neither header: what follows is taken as the next answer, as a HEAD's would be).
 * Interim 100 answers are skipped.
 */
export function parseAnswers(bytes: Buffer): { answers: RawAnswer[]; rest: number } {
  const answers: RawAnswer[] = [];
  let p = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', p, 'latin1');
    if (end < 0) break;
    const lines = bytes.toString('latin1', p, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1]);
    if (!status) throw new Error(`not an HTTP answer: ${JSON.stringify(lines[0])}`);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    let q = end + 4;
    let body = '';
    if (status >= 200 && status !== 204 && status !== 304) {
      if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
        const chunks: string[] = [];
        let whole = false;
        for (;;) {
          const eol = bytes.indexOf('\r\n', q, 'latin1');
          if (eol < 0) break;
          const size = Number.parseInt(bytes.toString('latin1', q, eol), 16);
          if (size === 0) {
            const trailerEnd = bytes.indexOf('\r\n\r\n', eol, 'latin1');
            if (bytes.indexOf('\r\n', eol + 2, 'latin1') === eol + 2) q = eol + 4;
            else if (trailerEnd >= 0) q = trailerEnd + 4;
            else break;
            whole = true;
            break;
          }
          if (eol + 2 + size + 2 > bytes.length) break;
          chunks.push(bytes.toString('latin1', eol + 2, eol + 2 + size));
          q = eol + 2 + size + 2;
        }
        if (!whole) break;
        body = chunks.join('');
      } else if (headers['content-length'] !== undefined) {
        const length = Number(headers['content-length']);
        if (q + length > bytes.length) break;
        body = bytes.toString('latin1', q, q + length);
        q += length;
      }
    }
    if (status >= 100 && status < 200) {
      p = q;
      continue;
    }
    answers.push({ status, headers, body });
    p = q;
  }
  return { answers, rest: p };
}

/** A request's bytes: the request line, `Host`, the headers given, and the body as it is (framing is the caller's). */
export function rawRequest(
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body = '',
  version = '1.1',
): string {
  let head = `${method} ${target} HTTP/${version}\r\nHost: 127.0.0.1\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  return `${head}\r\n${body}`;
}

/** The port of a URL such as a stack's `managementUrl`. */
export const portOf = (url: string): number => Number(new URL(url).port);
