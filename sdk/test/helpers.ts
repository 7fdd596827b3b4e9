/** What the SDK's tests share: a TCP proxy in front of a surface that can lose an answer, and a headers log. */

export interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
}

/** The request line and headers of an HTTP/1.1 request that starts a chunk. */
function parseHead(text: string): Seen | null {
  const m = /^([A-Z]+) (\S+) HTTP\/1\.1\r\n/.exec(text);
  if (!m) return null;
  const headers: Record<string, string> = {};
  for (const line of text.slice(m[0].length, text.indexOf('\r\n\r\n')).split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return { method: m[1]!, path: m[2]!, headers };
}

/**
 * A proxy on a free loopback port, passing bytes to `upstream` both ways (Bun.listen and Bun.connect: it owns no
 * HTTP framing beyond reading a request's first line). `loseNextAnswer(method)`: the next request of that method is
 * sent on whole, and its answer, once the upstream has written it, never reaches the client: the connection closes.
 */
export async function startProxy(upstream: string) {
  const target = new URL(upstream);
  const seen: Seen[] = [];
  let lose: string | null = null;
  let lost = 0;
  type Pair = { up: Awaited<ReturnType<typeof Bun.connect>> | null; pending: Uint8Array[]; drop: boolean };
  const server = Bun.listen<Pair>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      async open(client) {
        client.data = { up: null, pending: [], drop: false };
        client.data.up = await Bun.connect({
          hostname: target.hostname,
          port: Number(target.port),
          socket: {
            data(_, chunk) {
              if (client.data.drop) {
                lost++;
                client.terminate();
                _.end();
                return;
              }
              client.write(chunk);
            },
            close() {
              client.end();
            },
          },
        });
        for (const c of client.data.pending) client.data.up.write(c);
        client.data.pending = [];
      },
      data(client, chunk) {
        const head = parseHead(new TextDecoder().decode(chunk.subarray(0, 8192)));
        if (head) {
          seen.push(head);
          if (lose && head.method === lose) {
            lose = null;
            client.data.drop = true;
          }
        }
        if (client.data.up) client.data.up.write(chunk);
        else client.data.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data.up?.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    seen,
    get lost() {
      return lost;
    },
    loseNextAnswer(method: string) {
      lose = method;
    },
    stop: () => server.stop(true),
  };
}

/** A `fetch` that records each attempt's status (or its failure) before the SDK sees it. */
export function countingFetch() {
  const attempts: (number | 'error')[] = [];
  /** Each answer's `Retry-After`, or null. */
  const retryAfter: (string | null)[] = [];
  const f = async (url: string, init: RequestInit) => {
    try {
      const res = await fetch(url, init);
      attempts.push(res.status);
      retryAfter.push(res.headers.get('retry-after'));
      return res;
    } catch (err) {
      attempts.push('error');
      throw err;
    }
  };
  return { fetch: f, attempts, retryAfter };
}
