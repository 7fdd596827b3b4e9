import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { revokeApiKey, rollApiKey, setKeyOrigins } from '@studio/control';
import { createGateway } from '@studio/gateway';
import { GW, newRequestId, redisNames, signedHeaders } from '@studio/shared';
import { createSql, quitRedis } from '@studio/shared/io';
import { freePort } from '../../scripts/lib/ports';
import { deleteStudio } from '../../scripts/lib/studios';
import { expectProblem, inMode, MODES, redisCheck, type Stack, serveSurface, startStack } from '../../test/harness';
import { inEachMode } from '../../test/needs';
import type { ActivityEntry } from '../src/activity/entry';
import { ActivityWriter, FLUSH_ROWS } from '../src/activity/writer';

let s: Stack;
/** A studio's successful call, as the record step logs one. */
const entryOf = (studioId: string, requestId: string, at = Date.now()): ActivityEntry => ({
  studioId,
  keyId: 'key_entry',
  operationId: null,
  method: 'GET',
  path: '/v1/x',
  status: 200,
  outcome: 'success',
  durationMs: 0.1,
  requestId,
  at,
});
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

async function addInstructor(studioId: string, name: string) {
  await s.sql`insert into instructors (id, studio_id, name) values (${`ins_${crypto.randomUUID().replaceAll('-', '')}`}, ${studioId}, ${name})`;
}

// with Redis, and in single-node mode (revocation over Postgres LISTEN/NOTIFY, docs/design/single-node.md)
for (const mode of MODES)
  inEachMode(mode).describe(`revocation (${mode})`, () => {
    let r: Stack; // the file's stack with Redis; a single-node one of its own otherwise
    beforeAll(async () => (r = mode === 'redis' ? s : await startStack(inMode(mode))));
    afterAll(async () => {
      if (r !== s) await r?.close();
    });

    test('a revoked key fails on the very next request, right after a successful one', async () => {
      const st = await r.studio();
      for (let i = 0; i < 20; i++) {
        const { key, id } = await r.key(st.id, 'secret', ['instructors:read']);
        expect((await r.mg('/v1/instructors', key)).status).toBe(200); // now cached in-process and in Redis
        await r.revoke(id);
        await expectProblem(await r.mg('/v1/instructors', key), 401, 'api_key_revoked');
      }
    });
    test.if(mode === 'redis')('every gateway replica refuses a revoked key once the revoke returns', async () => {
      // a second replica beside the harness's, sharing Postgres and Redis as production replicas do
      const subscriber = r.redis.duplicate();
      await subscriber.connect();
      // this replica hears broadcasts 100 ms late, as over a slow network: only waiting for its ack makes the revoke safe
      const late = new Proxy(subscriber, {
        get: (target, prop) =>
          prop === 'subscribe'
            ? (channel: string, listener: (m: string) => void) =>
                target.subscribe(channel, (m: string) => void setTimeout(() => listener(m), 100))
            : Reflect.get(target, prop),
      });
      const replica = createGateway({ config: r.config, sql: r.sql, redis: r.redis, subscriber: late });
      await replica.start();
      const server = serveSurface(replica.management);
      const viaReplica = (key: string) =>
        fetch(`http://127.0.0.1:${server.port}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } });
      try {
        const st = await r.studio();
        for (let i = 0; i < 10; i++) {
          const { key, id } = await r.key(st.id, 'secret', ['instructors:read']);
          // warm both replicas' in-process caches, and the shared Redis record
          expect((await viaReplica(key)).status).toBe(200);
          expect((await r.mg('/v1/instructors', key)).status).toBe(200);
          const record = await revokeApiKey(r.sql, r.bus, id);
          expect(record.propagated).toBe(true);
          await expectProblem(await viaReplica(key), 401, 'api_key_revoked');
          await expectProblem(await r.mg('/v1/instructors', key), 401, 'api_key_revoked');
        }
      } finally {
        server.stop(true);
        await replica.stop();
        await quitRedis(subscriber);
      }
    });
    test.if(mode === 'redis')(
      'a lookup that read Postgres before the revoke cannot park the live record in Redis after it',
      async () => {
        const st = await r.studio();
        const { key, id } = await r.key(st.id, 'publishable');
        const [row] = await r.sql<
          { hash: string; studioId: string }[]
        >`select hash, studio_id from api_keys where id = ${id}`;
        const live = {
          id,
          studioId: row!.studioId,
          kind: 'publishable' as const,
          scopes: [],
          mode: 'live' as const,
          revoked: false,
          studioLive: true,
          expiresAt: null,
          allowedOrigins: null,
        };
        await revokeApiKey(r.sql, r.bus, id);
        await r.gateway.keys.share(row!.hash, live); // the racing replica's late write
        expect(await r.redis.exists(redisNames(r.config.REDIS_PREFIX).record(row!.hash))).toBe(0);
        await expectProblem(await r.sf('/v1/instructors', key), 401, 'api_key_revoked');
      },
    );
    test.if(mode === 'single-node')(
      'the revoke returns once the gateway confirmed over Postgres that it dropped the key; roll, origins and studio deletion too',
      async () => {
        const st = await r.studio();
        const hashOf = async (id: string) =>
          (await r.sql<{ hash: string }[]>`select hash from api_keys where id = ${id}`)[0]!.hash;
        for (const change of ['revoke', 'roll', 'origins', 'delete'] as const) {
          const { key, id } = await r.key(
            st.id,
            change === 'origins' ? 'publishable' : 'secret',
            change === 'origins' ? [] : ['instructors:read'],
          );
          const call = () =>
            change === 'origins'
              ? r.sf('/v1/instructors', key, { headers: { origin: 'https://elsewhere.example' } })
              : r.mg('/v1/instructors', key);
          expect((await call()).status).toBe(200);
          expect(r.gateway.keys.peek(await hashOf(id))).toMatchObject({ id }); // in the gateway's memory
          const propagated =
            change === 'revoke'
              ? (await revokeApiKey(r.sql, r.bus, id)).propagated
              : change === 'roll'
                ? (await rollApiKey(r.sql, r.bus, id, 0)).propagated
                : change === 'origins'
                  ? (await setKeyOrigins(r.sql, r.bus, id, ['https://lotus.example'])).propagated
                  : (await deleteStudio(r.sql, r.bus, st.id), true);
          expect(propagated).toBe(true);
          expect(r.gateway.keys.peek(await hashOf(id))).toBeUndefined(); // dropped before the call returned
          const refused = {
            revoke: [401, 'api_key_revoked'],
            roll: [401, 'api_key_expired'],
            origins: [403, 'origin_not_allowed'],
            delete: [403, 'studio_required'],
          } as const;
          await expectProblem(await call(), refused[change][0], refused[change][1]);
        }
      },
    );
  });

describe('caller-sent internal headers change nothing', () => {
  test('forged x-gw-* headers are dropped before forwarding', async () => {
    const a = await s.studio();
    const b = await s.studio();
    await addInstructor(a.id, 'Ada of A');
    await addInstructor(b.id, 'Bea of B');
    const { key, id } = await s.key(a.id, 'secret', ['instructors:read']);
    const forged = signedHeaders('guess', 'GET', '/v1/instructors', {
      studioId: b.id,
      keyId: id,
      scopes: ['instructors:write'],
      operationId: 'x',
      requestId: 'req_forged',
    });
    const res = await s.mg('/v1/instructors', key, {
      headers: { ...forged, [GW.studio]: b.id, 'x-request-id': 'req_mine' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).not.toBe('req_mine');
    const body = (await res.json()) as { data: { name: string }[] };
    expect(body.data.map((i) => i.name)).toEqual(['Ada of A']);
  });
  test('forged scopes do not grant a scope', async () => {
    const a = await s.studio();
    const { key } = await s.key(a.id, 'secret', []);
    await expectProblem(
      await s.mg('/v1/instructors', key, { headers: { [GW.scopes]: 'instructors:read' } }),
      403,
      'scope_required',
    );
  });
});

describe('services refuse requests the gateway did not sign', () => {
  const direct = (base: string, headers: Record<string, string> = {}) => fetch(`${base}/v1/instructors`, { headers });
  test('no signature', async () => {
    for (const base of [s.storefrontServiceUrl, s.managementServiceUrl]) {
      const res = await direct(base);
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^req_/);
      expect((await expectProblem(res, 401, 'gateway_signature_invalid')).instance).toBe(`urn:request:${id}`);
    }
  });
  test('a signature with the wrong secret, for another path, or older than 60 s', async () => {
    const st = await s.studio();
    const caller = {
      studioId: st.id,
      keyId: 'key_x',
      scopes: ['instructors:read'],
      operationId: 'managementListInstructors',
      requestId: 'req_1',
    };
    await expectProblem(
      await direct(
        s.managementServiceUrl,
        signedHeaders('wrong-secret-wrong-secret', 'GET', '/v1/instructors', caller),
      ),
      401,
      'gateway_signature_invalid',
    );
    await expectProblem(
      await direct(s.managementServiceUrl, signedHeaders(s.config.GATEWAY_SECRET, 'GET', '/v1/classes', caller)),
      401,
      'gateway_signature_invalid',
    );
    await expectProblem(
      await direct(
        s.managementServiceUrl,
        signedHeaders(s.config.GATEWAY_SECRET, 'GET', '/v1/instructors', caller, Date.now() - 61_000),
      ),
      401,
      'gateway_signature_invalid',
    );
    const tampered = {
      ...signedHeaders(s.config.GATEWAY_SECRET, 'GET', '/v1/instructors', caller),
      [GW.studio]: 'std_other',
    };
    await expectProblem(await direct(s.managementServiceUrl, tampered), 401, 'gateway_signature_invalid');
    // and the genuine article works, which proves the refusals above are about the signature
    expect(
      (await direct(s.managementServiceUrl, signedHeaders(s.config.GATEWAY_SECRET, 'GET', '/v1/instructors', caller)))
        .status,
    ).toBe(200);
  });
  test('health endpoints need no signature', async () => {
    expect((await fetch(`${s.managementServiceUrl}/healthz`)).status).toBe(200);
    // one readiness answer (docs/design/processes.md) on every process: both services, both API surfaces and the dashboard
    for (const url of [
      s.storefrontServiceUrl,
      s.managementServiceUrl,
      s.storefrontUrl,
      s.managementUrl,
      s.dashboardUrl,
    ]) {
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { postgres: 'up', redis: redisCheck(s) } });
    }
  });
});

describe('framing', () => {
  test('X-Request-Id on every response, unique per request', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'publishable');
    const ids = new Set<string>();
    for (const res of [
      await s.sf('/v1/instructors', key),
      await s.sf('/v1/nope', key),
      await s.mg('/v1/classes', null),
    ]) {
      ids.add(res.headers.get('x-request-id')!);
    }
    expect(ids.size).toBe(3);
  });
  test('a body over 1 MiB -> 413 payload_too_large', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'secret', ['instructors:write']);
    const res = await s.mg('/v1/instructors', key, {
      method: 'POST',
      body: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    });
    await expectProblem(res, 413, 'payload_too_large');
  });
  test('headers a service does not read are not passed on, so large ones do not cost the caller a bare 431', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'secret', ['instructors:read']);
    // within the gateway's 16 KiB, and over the service's once the gateway's own headers are added, were it passed on
    const res = await s.mg('/v1/instructors', key, { headers: { cookie: `session=${'a'.repeat(15_900)}` } });
    expect(res.status).toBe(200);
  });
  test("a target and passed-on headers over 16 KiB with the gateway's -> 431 request_headers_too_large", async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'secret', ['instructors:read']);
    const tag = `"${'a'.repeat(15_900)}"`;
    await expectProblem(
      await s.mg('/v1/instructors', key, { headers: { 'if-none-match': tag } }),
      431,
      'request_headers_too_large',
    );
    await expectProblem(await s.mg(`/v1/instructors?q=${'a'.repeat(15_900)}`, key), 431, 'request_headers_too_large');
  });
  test('a read that declares a body over 1 MiB -> 413 payload_too_large, as its OpenAPI document says', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'publishable');
    // fetch sends no body with a GET: the request as a careless or hostile client writes it, its body never sent
    const { port } = new URL(s.storefrontUrl);
    let answer = '';
    const done = Promise.withResolvers<void>();
    const socket = await Bun.connect({
      hostname: '127.0.0.1',
      port: Number(port),
      socket: {
        data(_s, chunk) {
          answer += chunk.toString();
          if (answer.includes('payload_too_large')) done.resolve();
        },
        close: () => done.resolve(),
      },
    });
    socket.write(
      `GET /v1/config HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-length: ${2 * 1024 * 1024}\r\n\r\n`,
    );
    await done.promise;
    socket.end();
    expect(answer).toStartWith('HTTP/1.1 413');
    expect(answer).toContain('"code":"payload_too_large"');
    const doc = await (await fetch(`${s.storefrontUrl}/openapi.json`)).json();
    expect(Object.keys(doc.paths['/v1/config'].get.responses)).toContain('413');
  });
  test('RateLimit headers on every keyed response', async () => {
    const st = await s.studio();
    const { key } = await s.key(st.id, 'secret', ['instructors:read']);
    const res = await s.mg('/v1/instructors', key);
    expect(res.headers.get('ratelimit-policy')).toBe('"key";q=1000;w=1');
    expect(res.headers.get('ratelimit')).toMatch(/^"key";r=\d+;t=\d+$/);
  });
});

describe('activity', () => {
  test('every request whose key resolves is recorded, including gateway refusals and unknown routes', async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'secret', ['instructors:read']);
    await s.mg('/v1/instructors', key);
    await s.mg('/v1/classes', key); // 403 scope
    await s.mg('/v1/unknown', key); // 404 route
    await s.sf('/v1/instructors', key); // 401 wrong kind
    await s.gateway.activity.flush();
    const rows = await s.sql<
      { operationId: string | null; method: string; path: string; status: number; outcome: string; requestId: string }[]
    >`
      select operation_id, method, path, status, outcome, request_id from activity where key_id = ${id} order by id`;
    expect(rows.map((r) => [r.operationId, r.path, r.status, r.outcome])).toEqual([
      ['managementListInstructors', '/v1/instructors', 200, 'success'],
      ['managementListClasses', '/v1/classes', 403, 'client_error'],
      [null, '/v1/unknown', 404, 'client_error'],
      ['storefrontListInstructors', '/v1/instructors', 401, 'client_error'],
    ]);
    const [k] = await s.sql<{ lastUsedAt: Date | null }[]>`select last_used_at from api_keys where id = ${id}`;
    expect(k!.lastUsedAt).toBeInstanceOf(Date);
  });
  test('refused calls (401, 403) are logged but leave last used alone', async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'secret', ['instructors:read']);
    await s.mg('/v1/classes', key); // 403 scope_required
    await s.sf('/v1/instructors', key); // 401 api_key_wrong_kind
    await s.gateway.activity.flush();
    const lastUsed = async () =>
      (await s.sql<{ lastUsedAt: Date | null }[]>`select last_used_at from api_keys where id = ${id}`)[0]!.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    expect((await s.sql`select count(*)::int as n from activity where key_id = ${id}`)[0]!.n).toBe(2);
    await s.mg('/v1/instructors', key);
    await s.gateway.activity.flush();
    const used = await lastUsed();
    expect(used).toBeInstanceOf(Date);
    await s.revoke(id);
    await s.mg('/v1/instructors', key); // 401 api_key_revoked
    await s.gateway.activity.flush();
    expect(await lastUsed()).toEqual(used);
  });
  test("a service's problem is on the entry, code and detail: forwarded, and through the Storefront cache's miss (one upstream call for concurrent callers), for each caller", async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'publishable');
    const answers = await Promise.all([1, 2, 3].map(() => s.sf('/v1/site', key))); // not published: 404
    const bodies = await Promise.all(answers.map((r) => r.json() as Promise<{ code: string; detail: string }>));
    expect(bodies.map((b) => b.code)).toEqual(['site_not_published', 'site_not_published', 'site_not_published']);
    const secret = await s.key(st.id, 'secret', ['instructors:read']);
    const bad = (await (await s.mg('/v1/instructors?cursor=bad', secret.key)).json()) as {
      code: string;
      detail: string;
    };
    await s.gateway.activity.flush();
    const rows = await s.sql<{ keyId: string; problemCode: string; problemDetail: string }[]>`
      select key_id, problem_code, problem_detail from activity where studio_id = ${st.id} order by id`;
    expect(rows.map((r) => [r.keyId, r.problemCode, r.problemDetail])).toEqual([
      ...bodies.map((b) => [id, 'site_not_published', b.detail]),
      [secret.id, 'invalid_cursor', bad.detail],
    ]);
  });
  test('no entry for a request without a resolvable key', async () => {
    const before = (await s.sql`select count(*)::int as n from activity`)[0]!.n;
    await s.mg('/v1/instructors', null);
    await s.gateway.activity.flush();
    expect((await s.sql`select count(*)::int as n from activity`)[0]!.n).toBe(before);
  });
});

test('activity texts with tabs, newlines, backslashes and past ASCII are stored exactly', async () => {
  const st = await s.studio();
  const { key, id } = await s.key(st.id, 'publishable');
  const odd = '/v1/a%09b/c\\d';
  await s.sf(odd, key);
  await s.gateway.activity.record({
    studioId: st.id,
    keyId: id,
    operationId: null,
    method: 'GET',
    path: '/x\ty\nz\\w\r',
    status: 404,
    outcome: 'client_error',
    durationMs: 0.5,
    requestId: 'req_odd',
    at: Date.now(),
  });
  // text past ASCII, short and long (ASCII is written byte by byte, the rest as UTF-8 by the runtime)
  const wide = {
    path: `/v1/café/${'x'.repeat(70)}é`,
    userAgent: 'agent ü',
    query: 'q=🧘',
    problemDetail: 'y'.repeat(80),
  };
  await s.gateway.activity.record({
    studioId: st.id,
    keyId: id,
    operationId: null,
    method: 'GET',
    status: 404,
    outcome: 'client_error',
    durationMs: 0.5,
    requestId: 'req_wide',
    at: Date.now(),
    ...wide,
  });
  await s.gateway.activity.flush();
  const rows = await s.sql<{ path: string }[]>`select path from activity where key_id = ${id} order by id`;
  expect(rows.map((r) => r.path)).toEqual([new URL(`http://x${odd}`).pathname, '/x\ty\nz\\w\r', wide.path]);
  const [stored] = await s.sql`select user_agent, query, problem_detail from activity where request_id = 'req_wide'`;
  expect(stored).toEqual({ userAgent: wide.userAgent, query: wide.query, problemDetail: wide.problemDetail });
});

test('a flush asked for while one is running still writes what was recorded after that one began; times and durations survive the binary COPY', async () => {
  const st = await s.studio();
  const { id } = await s.key(st.id, 'publishable');
  const entry = (requestId: string, at: number) => ({
    studioId: st.id,
    keyId: id,
    operationId: 'storefrontGetConfig',
    method: 'GET',
    path: '/v1/config',
    status: 200,
    outcome: 'success' as const,
    durationMs: 1.25,
    requestId,
    at,
  });
  const at = Date.parse('2026-11-22T10:11:12.345Z');
  s.gateway.activity.record(entry('req_first', at));
  const first = s.gateway.activity.flush();
  s.gateway.activity.record(entry('req_second', at + 1));
  await s.gateway.activity.flush();
  await first;
  const rows = await s.sql<{ requestId: string; at: Date; durationMs: number; status: number }[]>`
    select request_id, at, duration_ms, status from activity where key_id = ${id} order by at`;
  expect(rows.map((r) => [r.requestId, r.at.toISOString(), r.durationMs, r.status])).toEqual([
    ['req_first', '2026-11-22T10:11:12.345Z', 1.25, 200],
    ['req_second', '2026-11-22T10:11:12.346Z', 1.25, 200],
  ]);
});

test("the log keeps a batch a key, minute and flush: two B-trees, by key and by studio, each on the newest entry of a batch; the gateway's batches enter no other index", async () => {
  const rows = await s.sql<
    { indexdef: string }[]
  >`select indexdef from pg_indexes where tablename = 'activity_batches' order by indexname`;
  expect(rows.map((r) => r.indexdef.replace(/^.* USING /, ''))).toEqual([
    'btree (studio_id, key_id, last_at, id)',
    'btree (studio_id, last_at, id)',
    // request ids from before they carried their time: a batch the gateway writes begins with one of its own ids
    'gin (request_id) WHERE (length(request_id[1]) < 26)',
  ]);
  expect(newRequestId().length).toBeGreaterThanOrEqual(26);
});

test('a flush writes one row per studio, key and UTC minute (at most 10,000 entries each), whatever its entries number', async () => {
  const [a, b] = [await s.studio(), await s.studio()];
  const writer = new ActivityWriter(s.sql, 600_000);
  const minute = Date.parse('2026-11-22T10:11:00.000Z');
  const at = (i: number) => minute + 59_000 + i; // the first thousand in one minute, the rest in the next
  for (let i = 0; i < 12_500; i++) writer.record({ ...entryOf(a.id, `req_many_${i}`), at: at(i) });
  writer.record({ ...entryOf(a.id, 'req_other_key'), keyId: 'key_other', at: at(0) });
  writer.record({ ...entryOf(b.id, 'req_other_studio'), at: at(0) });
  await writer.flush();
  const batches = await s.sql<{ studioId: string; keyId: string; n: number; firstAt: Date; lastAt: Date }[]>`
    select studio_id, key_id, cardinality(at) as n, first_at, last_at from activity_batches
    where studio_id in (${a.id}, ${b.id}) order by studio_id = ${a.id} desc, key_id, first_at, n desc`;
  expect(batches.map((r) => [r.studioId === a.id ? 'a' : 'b', r.keyId, r.n])).toEqual([
    // the 500th entry started a flush of its own (FLUSH_ROWS); the explicit one took the rest
    ['a', 'key_entry', 500],
    ['a', 'key_entry', 500],
    ['a', 'key_entry', 10_000],
    ['a', 'key_entry', 1_500],
    ['a', 'key_other', 1],
    ['b', 'key_entry', 1],
  ]);
  // read through the view, one row an entry, in the order they were recorded
  const ids = await s.sql<{ requestId: string }[]>`
    select request_id from activity where studio_id = ${a.id} and key_id <> 'key_other' order by at, id`;
  expect(ids.map((r) => r.requestId)).toEqual(Array.from({ length: 12_500 }, (_, i) => `req_many_${i}`));
  await writer.close();
});

test('entries a failed flush could not write are kept and written by the next one, once', async () => {
  const st = await s.studio();
  // a writer of its own, with no interval running: the gateway's own flushes would race the first check
  const writer = new ActivityWriter(s.sql, 600_000);
  writer.record(entryOf(st.id, 'req_kept'));
  await s.sql`alter table activity_batches rename to activity_away`;
  try {
    await writer.flush(); // fails: no such table
  } finally {
    await s.sql`alter table activity_away rename to activity_batches`;
  }
  const written = async () =>
    (await s.sql<{ requestId: string }[]>`select request_id from activity where studio_id = ${st.id}`).map(
      (r) => r.requestId,
    );
  expect(await written()).toEqual([]);
  await writer.flush();
  await writer.flush();
  expect(await written()).toEqual(['req_kept']);
});

test('a backlog of flushes that failed is written as one COPY of their chunks, each entry once; then a lone chunk again', async () => {
  const st = await s.studio();
  const writer = new ActivityWriter(s.sql, 600_000);
  const ids = (wave: number) => Array.from({ length: 3 }, (_, i) => `req_backlog_${wave}_${i}`);
  await s.sql`alter table activity_batches rename to activity_away`;
  try {
    // each failed flush leaves its rows as a chunk of their own, so the next flush sends three
    for (let wave = 0; wave < 3; wave++) {
      for (const id of ids(wave)) writer.record(entryOf(st.id, id));
      await writer.flush();
    }
  } finally {
    await s.sql`alter table activity_away rename to activity_batches`;
  }
  await writer.flush();
  for (const id of ids(3)) writer.record(entryOf(st.id, id));
  await writer.flush();
  const rows = await s.sql<{ requestId: string }[]>`select request_id from activity where studio_id = ${st.id}`;
  expect(rows.map((r) => r.requestId).sort()).toEqual([0, 1, 2, 3].flatMap(ids).sort());
});

/** A writer of its own on a connection of its own, as the gateway's, with a deadline short enough for a test. */
function ownWriter(deadlineMs: number, url = s.config.DATABASE_URL) {
  const sql = createSql(url, { max: 1 });
  return { sql, writer: new ActivityWriter(sql, 600_000, deadlineMs) };
}

/** `body` while Postgres stalls `seconds` in every activity COPY, after its rows are in (a statement trigger). */
async function whileCopiesStall(seconds: number, body: () => Promise<void>) {
  await s.sql.unsafe(
    `create function activity_stalled() returns trigger language plpgsql as $$ begin perform pg_sleep(${Number(seconds)}); return null; end $$`,
  );
  await s.sql`create trigger activity_stalled after insert on activity_batches for each statement execute function activity_stalled()`;
  try {
    await body();
  } finally {
    await s.sql`drop trigger activity_stalled on activity_batches`;
    await s.sql`drop function activity_stalled`;
  }
}

/** Until a COPY is stalled in the trigger (at most 5 s). */
async function untilCopyStalls() {
  const stalled = () =>
    s.sql`select 1 from pg_stat_activity where query like 'copy activity%' and wait_event = 'PgSleep'`;
  const deadline = Date.now() + 5_000;
  while (!(await stalled()).length && Date.now() < deadline) await Bun.sleep(10);
}

/** Once Postgres answers again, the writer's entry is written by a later flush, once; then the writer is closed. */
async function expectWrittenOnce(o: ReturnType<typeof ownWriter>, studioId: string) {
  try {
    // postgres.js may hand a cut session's last error to the first statement after it: the interval retries
    for (let i = 0; i < 5 && o.writer.buffered; i++) await o.writer.flush();
    expect(await s.sql`select 1 from activity where studio_id = ${studioId}`).toHaveLength(1);
  } finally {
    await o.writer.close();
    await o.sql.end({ timeout: 1 });
  }
}

test('a COPY whose session is cut before Postgres confirms it fails its flush, never holds it: a later flush writes the entry, once', async () => {
  const st = await s.studio();
  const own = ownWriter(1_000);
  await whileCopiesStall(3, async () => {
    own.writer.record(entryOf(st.id, 'req_held'));
    const flushed = own.writer.flush();
    await untilCopyStalls();
    await s.sql`select pg_terminate_backend(pid) from pg_stat_activity where query like 'copy activity%'`;
    await flushed;
    expect(own.writer.failedFlushes).toBe(1);
  });
  await expectWrittenOnce(own, st.id);
});

test('a COPY Postgres does not confirm within the deadline, its session up, is cancelled: its flush fails and a later one writes the entry, once', async () => {
  const st = await s.studio();
  const own = ownWriter(500);
  await whileCopiesStall(20, async () => {
    own.writer.record(entryOf(st.id, 'req_stalled'));
    const started = Date.now();
    await own.writer.flush();
    expect(own.writer.failedFlushes).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(own.writer.buffered).toBe(1);
    // the statement was cancelled, not left to finish: nothing of it stays running, and it wrote nothing
    const running = () => s.sql`select 1 from pg_stat_activity where query like 'copy activity%' and state = 'active'`;
    const deadline = Date.now() + 5_000;
    while ((await running()).length && Date.now() < deadline) await Bun.sleep(20);
    expect(await running()).toHaveLength(0);
  });
  await expectWrittenOnce(own, st.id);
});

test("a stalled COPY's cancel that cannot reach Postgres is logged, never an unhandled rejection that ends the process", async () => {
  // the writer reaches Postgres through a forwarder that stops taking connections once the COPY runs: the cancel
  // request (a connection of its own) is refused, the writer's own connection stays up
  const db = new URL(s.config.DATABASE_URL);
  const upstream = { hostname: db.hostname, port: Number(db.port || 5432) };
  type Pipe = { peer?: Bun.Socket<Pipe>; held: Uint8Array[] };
  const forwarder = Bun.listen<Pipe>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        client.data = { held: [] };
        void Bun.connect<Pipe>({
          ...upstream,
          data: { peer: client, held: [] },
          socket: {
            data: (pg, bytes) => void pg.data.peer?.write(bytes),
            close: (pg) => void pg.data.peer?.end(),
          },
        }).then((pg) => {
          client.data.peer = pg;
          for (const b of client.data.held.splice(0)) pg.write(b);
        });
      },
      data(client, bytes) {
        if (client.data.peer) client.data.peer.write(bytes);
        else client.data.held.push(new Uint8Array(bytes));
      },
      close: (client) => void client.data.peer?.end(),
    },
  });
  db.hostname = '127.0.0.1';
  db.port = String(forwarder.port);
  const own = ownWriter(500, db.href);
  const st = await s.studio();
  const warnings: string[] = [];
  const warn = console.error;
  console.error = (line: string) => void warnings.push(String(line));
  try {
    await whileCopiesStall(2, async () => {
      own.writer.record(entryOf(st.id, 'req_uncancelled'));
      const flushed = own.writer.flush();
      await untilCopyStalls();
      forwarder.stop(); // no new connection: the cancel request is refused
      await flushed;
      expect(own.writer.failedFlushes).toBe(1);
      await Bun.sleep(300); // the cancel request's connection is refused meanwhile
      expect(warnings.some((l) => l.includes('activity COPY could not be cancelled'))).toBe(true);
      await Bun.sleep(2_000); // the stall ends
    });
  } finally {
    console.error = warn;
    await own.writer.close().catch(() => {});
    await own.sql.end({ timeout: 1 });
  }
});

test('a full batch of entries is written at once, without waiting for the interval; its hourly count follows with the next flush, once', async () => {
  const st = await s.studio();
  const writer = new ActivityWriter(s.sql, 600_000);
  writer.start();
  try {
    for (let i = 0; i < FLUSH_ROWS; i++) writer.record(entryOf(st.id, `req_batch_${i}`));
    const written = async () =>
      (await s.sql<{ n: number }[]>`select count(*)::int as n from activity where studio_id = ${st.id}`)[0]!.n;
    const deadline = Date.now() + 5_000;
    while ((await written()) < FLUSH_ROWS && Date.now() < deadline) await Bun.sleep(20);
    expect(await written()).toBe(FLUSH_ROWS);
    // the batch wrote entries only; the counts go with the interval's flush, with nothing lost or counted twice
    writer.record(entryOf(st.id, 'req_batch_last'));
    await writer.flush();
    const [hourly] = await s.sql<
      { calls: number }[]
    >`select sum(calls)::int as calls from activity_hourly where studio_id = ${st.id}`;
    expect(hourly!.calls).toBe(FLUSH_ROWS + 1);
    expect(await written()).toBe(FLUSH_ROWS + 1);
  } finally {
    await writer.close();
  }
});

test('wave after wave of entries, recorded while their COPYs run, every entry lands as recorded, once', async () => {
  const st = await s.studio();
  const writer = new ActivityWriter(s.sql, 600_000);
  writer.start();
  const expected = new Map<string, string>();
  try {
    for (let wave = 0; wave < 5; wave++) {
      // a batch's COPY starts at FLUSH_ROWS and runs while the wave's next entries are recorded
      for (let i = 0; i < FLUSH_ROWS * 2 + 37; i++) {
        const requestId = `req_wave_${wave}_${i}`;
        const path = `/v1/w${wave}/${'p'.repeat((i * 7 + wave) % 200)}`;
        expected.set(requestId, path);
        writer.record({ ...entryOf(st.id, requestId), path });
      }
      await writer.flush();
    }
    // a COPY this VM's Postgres does not confirm within its deadline fails its flush, its rows kept: a later one writes them
    for (let tries = 0; writer.buffered > 0 && tries < 10; tries++) await writer.flush();
    const rows = await s.sql<
      { request_id: string; path: string }[]
    >`select request_id, path from activity where studio_id = ${st.id}`;
    expect(rows.length).toBe(expected.size);
    const wrong = rows.filter((r) => expected.get(r.request_id) !== r.path).map((r) => r.request_id);
    expect(wrong).toEqual([]);
  } finally {
    await writer.close();
  }
});

test("the activity log holds no transaction open between its batches: the event feed's horizon passes a later commit at once", async () => {
  // the feed and the webhooks serve an event once every transaction below it has ended (docs/design/events.md): a
  // writer that kept its COPY open between batches under load held every studio's events back until its interval
  const st = await s.studio();
  const sql = createSql(s.config.DATABASE_URL, { max: 1 });
  const writer = new ActivityWriter(sql, 600_000);
  try {
    for (let i = 0; i < FLUSH_ROWS; i++) writer.record(entryOf(st.id, `req_horizon_${i}`));
    await writer.flush(false); // a full batch, as `record` starts on its own once FLUSH_ROWS wait
    const xid = (await s.sql<{ xid: string }[]>`select pg_current_xact_id()::text as xid`)[0]!.xid;
    // another session's short transaction may hold the horizon for a moment; the writer's interval here is 600 s
    const passed = async () =>
      (await s.sql<{ ok: boolean }[]>`select ${xid}::xid8 < pg_snapshot_xmin(pg_current_snapshot()) as ok`)[0]!.ok;
    const deadline = Date.now() + 5_000;
    while (!(await passed()) && Date.now() < deadline) await Bun.sleep(20);
    expect(await passed()).toBe(true);
    const [written] = await s.sql<{ n: number }[]>`select count(*)::int as n from activity where studio_id = ${st.id}`;
    expect(written!.n).toBe(FLUSH_ROWS); // committed, not held for the interval
  } finally {
    await writer.close();
    await sql.end({ timeout: 1 });
  }
});

test('while Postgres is away a full buffer is retried on the interval, not on every entry', async () => {
  const away = createSql(`postgres://postgres@127.0.0.1:${await freePort()}/away`, { max: 1 });
  const writer = new ActivityWriter(away, 600_000);
  try {
    for (let i = 0; i < FLUSH_ROWS; i++) writer.record(entryOf('std_away', `req_away_${i}`));
    const deadline = Date.now() + 5_000;
    while (!writer.failedFlushes && Date.now() < deadline) await Bun.sleep(10);
    expect(writer.failedFlushes).toBe(1);
    for (let i = 0; i < FLUSH_ROWS; i++) writer.record(entryOf('std_away', `req_away_more_${i}`));
    await Bun.sleep(300);
    expect(writer.failedFlushes).toBe(1);
    expect(writer.buffered).toBe(2 * FLUSH_ROWS);
  } finally {
    await away.end({ timeout: 1 });
  }
});

test('activity_hourly counts every entry once, per studio and hour, through a failed flush too', async () => {
  const st = await s.studio();
  const { id } = await s.key(st.id, 'publishable');
  const hour = Date.parse('2026-11-22T09:00:00Z');
  const entry = (n: number, status: number) => ({
    studioId: st.id,
    keyId: id,
    operationId: null,
    method: 'GET',
    path: '/v1/x',
    status,
    outcome: status < 400 ? ('success' as const) : ('client_error' as const),
    durationMs: 0.1,
    requestId: `req_hourly_${n}`,
    at: hour + n * 60_000,
  });
  s.gateway.activity.record(entry(1, 200));
  s.gateway.activity.record(entry(2, 404));
  await s.gateway.activity.flush();
  s.gateway.activity.record(entry(3, 200));
  await s.sql`alter table activity_hourly rename to activity_hourly_away`;
  try {
    await s.gateway.activity.flush(); // fails: the counts are kept for the next one
  } finally {
    await s.sql`alter table activity_hourly_away rename to activity_hourly`;
  }
  s.gateway.activity.record(entry(4, 500));
  await s.gateway.activity.flush();
  const rows = await s.sql<
    { hour: Date; calls: number; errors: number }[]
  >`select hour, calls, errors from activity_hourly where studio_id = ${st.id}`;
  expect(rows.map((r) => [r.hour.toISOString(), r.calls, r.errors])).toEqual([['2026-11-22T09:00:00.000Z', 4, 2]]);
  expect(await s.sql`select 1 from activity where studio_id = ${st.id}`).toHaveLength(4);
});

test('retention: entries and hourly counts older than 90 days go, newer ones stay', async () => {
  const st = await s.studio();
  const day = 86_400_000;
  const now = Date.now();
  s.gateway.activity.record(entryOf(st.id, 'req_old', now - 91 * day));
  s.gateway.activity.record(entryOf(st.id, 'req_recent', now - 89 * day));
  await s.gateway.activity.flush();
  expect(await s.sql`select 1 from activity_hourly where studio_id = ${st.id}`).toHaveLength(2);
  await s.gateway.activity.prune();
  expect(
    (await s.sql<{ requestId: string }[]>`select request_id from activity where studio_id = ${st.id}`).map(
      (r) => r.requestId,
    ),
  ).toEqual(['req_recent']);
  expect(await s.sql`select 1 from activity_hourly where studio_id = ${st.id}`).toHaveLength(1);
});
