/**
 * The API ports on the wire, against what a hostile or broken client sends on one connection (a security walk's
 * findings): a chunked body's trailers must not leak into the request after it, HTTP/1.0 with chunks must not be
 * read as a body (a smuggled request after it must not run), and a connection kept alive and used is never closed
 * under a caller while it is in use. Raw sockets, through the whole stack; no server of ours is assumed but the port.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { inHours, instructor, klass } from '../../storefront-service/test/fixtures';
import { type Stack, startStack } from '../../test/harness';
import { portOf, type RawAnswer, RawConnection, rawRequest } from './raw-http';

let s: Stack;
let studioId: string;
let secret: { key: string; id: string };
let publishable: string;
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio()).id;
  secret = await s.key(studioId, 'secret', ['classes:read', 'classes:write', 'instructors:read', 'instructors:write']);
  publishable = (await s.key(studioId, 'publishable')).key;
});
afterAll(() => s.close());

/** A scheduled class (and its instructor) straight in SQL, tomorrow. */
const scheduledClass = async (): Promise<string> =>
  (await klass(s.sql, studioId, { instructorId: await instructor(s.sql, studioId), startsAt: inHours(24) })).id;

const classStatus = async (classId: string) =>
  (await s.sql<{ status: string }[]>`select status from classes where id = ${classId}`)[0]?.status;

/** The calls the gateway recorded under a key: what it took each request to be. */
async function recordedFor(keyId: string) {
  await s.gateway.activity.flush();
  return [
    ...(await s.sql<{ method: string; path: string; status: number }[]>`
      select method, path, status from activity where key_id = ${keyId} order by id`),
  ];
}

const summary = (a: RawAnswer[]) => a.map((x) => `${x.status} ${x.body.slice(0, 160)}`);

/** A chunked body of `json`, ended by the trailer lines given (`Name: value\r\n` each). */
const chunked = (json: string, trailers = '') => `${json.length.toString(16)}\r\n${json}\r\n0\r\n${trailers}\r\n`;

describe('chunked trailers', () => {
  test('a request after a chunked body with a trailer is never read with the target of the one before it (no class cancelled)', async () => {
    const classId = await scheduledClass();
    const fresh = await s.key(studioId, 'secret', ['classes:write', 'instructors:write']);
    const c = await RawConnection.open(portOf(s.managementUrl));
    try {
      // no key on the first; its target ends in `?x=`, so a target glued to it still routes to the class
      await c.write(
        rawRequest(
          'POST',
          `/v1/classes/${classId}?x=`,
          { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          chunked('{}', 'X-Trailer: y\r\n'),
        ) +
          rawRequest('DELETE', '/v1/instructors/ins_x', {
            authorization: `Bearer ${fresh.key}`,
            'idempotency-key': crypto.randomUUID(),
          }),
      );
      const answers = await c.read(2, 3_000);
      await Bun.sleep(300); // a write the gateway did run has landed by now
      // the class is as it was: no DELETE ever reached it
      expect(await classStatus(classId), summary(answers).join('\n')).toBe('scheduled');
      // the first is refused for what it is (no key, no such route for a POST)
      expect(answers.length).toBeGreaterThanOrEqual(1);
      expect(answers[0]!.status).toBeGreaterThanOrEqual(400);
      expect(answers[0]!.status).toBeLessThan(500);
      // the second, if run at all, was run as what it said: its own target (Bun.serve answers a bare 400 instead)
      for (const a of answers.slice(1)) expect(a.body).not.toContain(classId);
      for (const row of await recordedFor(fresh.id))
        expect(row).toMatchObject({ method: 'DELETE', path: '/v1/instructors/ins_x' });
    } finally {
      c.close();
    }
  });

  test('a trailer is never a header of the next request: a key sent as a trailer authenticates nothing after it', async () => {
    const classId = await scheduledClass();
    const trailerKey = await s.key(studioId, 'secret', ['classes:read', 'classes:write', 'instructors:write']);
    const heard: RawAnswer[][] = [];
    for (const split of [false, true]) {
      const c = await RawConnection.open(portOf(s.managementUrl));
      try {
        // the key only in the first request's trailer; the request after it sends none
        const first = rawRequest(
          'POST',
          '/v1/instructors',
          { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          chunked('{}', `Authorization: Bearer ${trailerKey.key}\r\n`),
        );
        const next = rawRequest('DELETE', `/v1/classes/${classId}`, { 'idempotency-key': crypto.randomUUID() });
        if (split) {
          // the next request's head in two pieces, as a slow network delivers it
          await c.write(first + next.slice(0, 12));
          await Bun.sleep(50);
          await c.write(next.slice(12));
        } else await c.write(first + next);
        heard.push(await c.read(2, 3_000));
      } finally {
        c.close();
      }
    }
    await Bun.sleep(300);
    const text = heard.flatMap(summary).join('\n');
    // nothing was ever run under the key the trailers carried
    expect(await recordedFor(trailerKey.id), text).toEqual([]);
    expect(await classStatus(classId), text).toBe('scheduled');
    for (const answers of heard) {
      // the first has no key: refused as such
      expect(answers[0]?.status, text).toBe(401);
      // the next has none either: refused as such (401), or not read at all (Bun.serve: a bare 400, then the close)
      if (answers[1]) expect([400, 401], text).toContain(answers[1].status);
    }
  });
});

describe('HTTP/1.0 with Transfer-Encoding: chunked', () => {
  test('is answered 400 and the connection closed: neither the request nor one smuggled after its chunks runs', async () => {
    const before = await s.sql`select id from instructors where studio_id = ${studioId}`;
    const auth = { authorization: `Bearer ${secret.key}`, 'content-type': 'application/json' };
    const smuggled = rawRequest(
      'POST',
      '/v1/instructors',
      { ...auth, 'idempotency-key': crypto.randomUUID(), 'content-length': '20' },
      '{"name":"Smuggled1"}',
    );
    for (const keepAlive of [false, true]) {
      const c = await RawConnection.open(portOf(s.managementUrl));
      try {
        // HTTP/1.0 has no chunked coding (RFC 9112, section 6.1): a front that frames it otherwise sees other requests
        await c.write(
          rawRequest(
            'POST',
            '/v1/instructors',
            {
              ...auth,
              'idempotency-key': crypto.randomUUID(),
              'transfer-encoding': 'chunked',
              ...(keepAlive ? { connection: 'keep-alive' } : {}),
            },
            chunked('{"name":"Chunked10"}') + smuggled,
            '1.0',
          ),
        );
        const closed = await c.closedWithin(3_000);
        const answers = c.answers();
        const text = summary(answers).join('\n');
        expect({ keepAlive, closed, statuses: answers.map((a) => a.status) }, text).toEqual({
          keepAlive,
          closed: true,
          statuses: [400],
        });
      } finally {
        c.close();
      }
    }
    await Bun.sleep(300);
    const after = await s.sql<{ name: string }[]>`select name from instructors where studio_id = ${studioId}`;
    expect(after.length).toBe(before.length);
    expect(after.map((r) => r.name)).not.toContain('Chunked10');
    expect(after.map((r) => r.name)).not.toContain('Smuggled1');
  });
});

describe('keep-alive', () => {
  test('a connection used every 5 s for 40 s is never closed by the server, and a write in flight gets its answer', async () => {
    const sf = await RawConnection.open(portOf(s.storefrontUrl));
    const mg = await RawConnection.open(portOf(s.managementUrl));
    const opened = Date.now();
    const at = (ms: number) => Bun.sleep(Math.max(0, opened + ms - Date.now()));
    /** Sends one request on `c`, reads its answer: its status, or what went wrong. */
    const call = async (c: RawConnection, bytes: string, within = 5_000) => {
      const n = c.answers().length;
      await c.write(bytes);
      const got = await c.read(n + 1, within);
      const second = Math.round((Date.now() - opened) / 1000);
      return got.length > n ? `${second}s ${got[n]!.status}` : `${second}s none (closed: ${c.closed})`;
    };
    try {
      const storefront = (async () => {
        const heard: string[] = [];
        for (let t = 0; t <= 40_000; t += 5_000) {
          await at(t);
          heard.push(await call(sf, rawRequest('GET', '/v1/plans', { authorization: `Bearer ${publishable}` })));
        }
        return heard;
      })();
      const management = (async () => {
        const heard: string[] = [];
        const list = rawRequest('GET', '/v1/instructors', { authorization: `Bearer ${secret.key}` });
        for (let t = 0; t <= 20_000; t += 5_000) {
          await at(t);
          heard.push(await call(mg, list));
        }
        // a write held in the service across the connection's 30th second (the instructors table locked 25-34 s)
        await at(25_000);
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        const locked = new Promise<void>((ready) => {
          void s.sql.begin(async (tx) => {
            await tx`lock table instructors in exclusive mode`;
            ready();
            await held;
          });
        });
        await locked;
        const body = '{"name":"Kept Alive"}';
        const write = call(
          mg,
          rawRequest(
            'POST',
            '/v1/instructors',
            {
              authorization: `Bearer ${secret.key}`,
              'content-type': 'application/json',
              'idempotency-key': crypto.randomUUID(),
              'content-length': String(body.length),
            },
            body,
          ),
          12_000,
        );
        await at(34_000);
        release();
        heard.push(await write);
        await at(40_000);
        heard.push(await call(mg, list));
        return heard;
      })();
      const [sfHeard, mgHeard] = await Promise.all([storefront, management]);
      const seconds = (list: string[]) => list.map((x) => x.replace(/^\d+s /, ''));
      expect(
        { storefront: seconds(sfHeard), sfClosed: sf.closed, management: seconds(mgHeard), mgClosed: mg.closed },
        `storefront: ${sfHeard.join(', ')}; management: ${mgHeard.join(', ')}`,
      ).toEqual({
        storefront: Array(9).fill('200'),
        sfClosed: false,
        management: ['200', '200', '200', '200', '200', '201', '200'],
        mgClosed: false,
      });
      expect(await s.sql`select 1 from instructors where studio_id = ${studioId} and name = 'Kept Alive'`).toHaveLength(
        1,
      );
    } finally {
      sf.close();
      mg.close();
    }
  }, 60_000);
});
