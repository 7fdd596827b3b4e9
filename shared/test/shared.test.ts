import { describe, expect, test } from 'bun:test';
import { createHash, createHmac } from 'node:crypto';
import {
  ANY_READ,
  ConfigError,
  EVENT_RESOURCE_SCOPES,
  EVENT_TYPES,
  generateKey,
  hashKey,
  isWrite,
  keyHint,
  keyModeOf,
  loadConfig,
  newId,
  newRequestId,
  OPERATIONS,
  PROBLEM_CODES,
  parseInstant,
  parseKey,
  problemBody,
  redactKeys,
  requestTimeOf,
  resourceOf,
  SCOPES,
  scopeAllows,
  signedHeaders,
  startTrace,
  statusOf,
  TEST_SCOPES,
  traceparentOf,
  verifySignature,
} from '@studio/shared';

test('redactKeys: every key in a text is replaced, nothing else changes', () => {
  const sk = generateKey('secret');
  const pk = generateKey('publishable');
  expect(redactKeys(`/v1/${sk}?a=${pk}&b=svc_sk_short`)).toBe(
    '/v1/svc_sk_[redacted]?a=svc_pk_[redacted]&b=svc_sk_short',
  );
  expect(redactKeys('/v1/classes?limit=5')).toBe('/v1/classes?limit=5');
});

describe('key text', () => {
  test('format: prefix + 32 base62, with a checksum that catches typos', () => {
    for (const kind of ['publishable', 'secret'] as const) {
      const k = generateKey(kind);
      expect(k).toMatch(kind === 'secret' ? /^svc_sk_[0-9A-Za-z]{32}$/ : /^svc_pk_[0-9A-Za-z]{32}$/);
      expect(parseKey(k)).toEqual({ kind, mode: 'live' });
      for (let i = 7; i < k.length; i++) {
        const typo = k.slice(0, i) + (k[i] === 'x' ? 'y' : 'x') + k.slice(i + 1);
        expect(parseKey(typo)).toBeNull();
      }
    }
    expect(parseKey(`svc_xk_${generateKey('secret').slice(7)}`)).toBeNull();
    expect(parseKey(`${generateKey('secret')}a`)).toBeNull();
  });
  test('test keys: prefix, test_, then the same 32 base62 and checksum; a typo anywhere, a missing or altered mode word is refused', () => {
    for (const kind of ['publishable', 'secret'] as const) {
      const k = generateKey(kind, 'test');
      expect(k).toMatch(kind === 'secret' ? /^svc_sk_test_[0-9A-Za-z]{32}$/ : /^svc_pk_test_[0-9A-Za-z]{32}$/);
      expect(k).toHaveLength(44);
      expect(parseKey(k)).toEqual({ kind, mode: 'test' });
      expect(keyModeOf(k)).toBe('test');
      for (let i = 7; i < k.length; i++) {
        const typo = k.slice(0, i) + (k[i] === 'x' ? 'y' : 'x') + k.slice(i + 1);
        expect(parseKey(typo)).toBeNull();
      }
      // the same random part and checksum read as a live key is a live key: the mode word is part of the text
      expect(parseKey(k.slice(0, 7) + k.slice(12))).toEqual({ kind, mode: 'live' });
      expect(parseKey(`${k.slice(0, 7)}TEST_${k.slice(12)}`)).toBeNull();
      expect(parseKey(`${k.slice(0, 7)}live_${k.slice(12)}`)).toBeNull();
      expect(parseKey(`${k}a`)).toBeNull();
      expect(keyHint(k)).toBe(`${kind === 'secret' ? 'svc_sk_test_' : 'svc_pk_test_'}…${k.slice(-4)}`);
    }
  });
  test('redaction: a live or a test key anywhere in a text keeps its prefix and mode, never its characters', () => {
    const live = generateKey('secret');
    const test = generateKey('publishable', 'test');
    const text = `/v1/classes?key=${live}&other=${test}x`;
    const red = redactKeys(text);
    expect(red).toBe('/v1/classes?key=svc_sk_[redacted]&other=svc_pk_test_[redacted]x');
    expect(red).not.toContain(live.slice(7));
    expect(red).not.toContain(test.slice(12));
  });
  test('keys are distinct, hashed with SHA-256, hinted by the last four', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateKey('secret')));
    expect(keys.size).toBe(1000);
    const k = [...keys][0]!;
    expect(hashKey(k)).toMatch(/^[0-9a-f]{64}$/);
    expect(keyHint(k)).toBe(`svc_sk_…${k.slice(-4)}`);
  });
});

test('ids are prefixed and sort by creation', async () => {
  const a = newId('class');
  await Bun.sleep(2);
  const b = newId('class');
  expect(a).toMatch(/^cls_[0-9A-Za-z]{22}$/);
  expect(a < b).toBe(true);
  expect(newId('room')).toStartWith('room_');
});

test('request ids are unique and carry the millisecond their request arrived; other strings carry none', () => {
  const at = Date.parse('2026-11-24T01:02:03.456Z');
  const ids = Array.from({ length: 1000 }, () => newRequestId(at));
  expect(new Set(ids).size).toBe(1000);
  for (const id of ids) {
    expect(id).toMatch(/^req_[0-9A-Za-z]{23,}$/);
    expect(requestTimeOf(id)).toBe(at);
  }
  expect(requestTimeOf(newRequestId(at + 1))).toBe(at + 1);
  const now = Date.now();
  expect(requestTimeOf(newRequestId())! - now).toBeLessThan(1000);
  // ids made before they carried the time, and strings that only look alike
  for (const other of [
    'req_dIb7Rjmz9800000rkh',
    'req_nothing',
    'req_test_1',
    `${ids[0]}!`,
    ids[0]!.replace('req_', 'rq_'),
    '',
  ]) {
    expect(requestTimeOf(other)).toBeNull();
  }
});

test("a request id's counter counts by one in base 36, through its last two digits' wrap and across milliseconds", () => {
  const at = Date.parse('2026-11-28T01:02:03.456Z');
  // 36² ids and more: the last two digits wrap at least twice
  const ids = [...Array.from({ length: 3000 }, () => newRequestId(at)), newRequestId(at + 1), newRequestId(at)];
  const counters = ids.map((id) => parseInt(id.slice(4 + 9 + 8), 36));
  for (let i = 1; i < counters.length; i++) expect(counters[i]).toBe(counters[0]! + i);
  for (const id of ids) expect(id).toMatch(/^req_[0-9a-z]{9}[0-9A-Za-z]{8}[0-9a-z]{6}$/);
  expect(requestTimeOf(ids[3000]!)).toBe(at + 1);
  expect(requestTimeOf(ids[3001]!)).toBe(at);
});

test('new traces get random ids, distinct across refills of the random pool; a continued one keeps its trace id', () => {
  const traces = Array.from({ length: 1000 }, () => startTrace(null));
  expect(new Set(traces.map((t) => t.traceId)).size).toBe(1000);
  expect(new Set(traces.map((t) => t.spanId)).size).toBe(1000);
  for (const t of traces) expect(traceparentOf(t)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  const continued = startTrace(traceparentOf(traces[0]!));
  expect(continued.traceId).toBe(traces[0]!.traceId);
  expect(continued.parentId).toBe(traces[0]!.spanId);
  expect(continued.spanId).not.toBe(traces[0]!.spanId);
});

test('time input accepts RFC 3339 with an offset only', () => {
  expect(parseInstant('2026-12-01T19:00:00+01:00')!.toISOString()).toBe('2026-12-01T18:00:00.000Z');
  expect(parseInstant('2026-12-01T18:00:00Z')).not.toBeNull();
  expect(parseInstant('2026-12-01T18:00:00')).toBeNull();
  expect(parseInstant('2026-13-01T18:00:00Z')).toBeNull();
  expect(parseInstant('tomorrow')).toBeNull();
});

test('one RFC 3339 parser: impossible calendar dates, times and offsets are refused, not rolled over', () => {
  for (const bad of [
    '2027-02-30T10:00:00Z',
    '2027-02-29T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-00-10T10:00:00Z',
    '2026-12-00T10:00:00Z',
    '2026-12-01T24:00:00Z',
    '2026-12-01T23:60:00Z',
    '2026-12-01T23:59:60Z',
    '2026-12-01T10:00:00+24:00',
    '2026-12-01T10:00:00+01:60',
    '2026-12-01 10:00:00Z',
    '2026-12-01T10:00Z',
    '2026-12-01T10:00:00.Z',
    ' 2026-12-01T10:00:00Z',
  ])
    expect({ bad, parsed: parseInstant(bad) }).toEqual({ bad, parsed: null });
  expect(parseInstant('2028-02-29T10:00:00Z')!.toISOString()).toBe('2028-02-29T10:00:00.000Z');
  expect(parseInstant('2000-02-29T00:00:00Z')).not.toBeNull();
  expect(parseInstant('1900-02-29T00:00:00Z')).toBeNull();
  expect(parseInstant('2026-12-01t18:00:00.123456789z')!.toISOString()).toBe('2026-12-01T18:00:00.123Z');
  expect(parseInstant('2026-12-31T23:30:00-01:00')!.toISOString()).toBe('2027-01-01T00:30:00.000Z');
  expect(parseInstant('0099-06-01T00:00:00Z')!.getUTCFullYear()).toBe(99);
});

describe('configuration', () => {
  test('defaults work on a developer machine', () => {
    const c = loadConfig({});
    expect(c.STOREFRONT_PORT).toBe(48004);
    expect(c.MANAGEMENT_PORT).toBe(48005);
    expect(c.DASHBOARD_PORT).toBe(48006);
  });
  test('a wrong value names the variable', () => {
    expect(() => loadConfig({ STOREFRONT_PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ STOREFRONT_PORT: 'eighty' })).toThrow(/STOREFRONT_PORT/);
    expect(() => loadConfig({ RATE_LIMIT_SECRET: 'fast' })).toThrow(/RATE_LIMIT_SECRET/);
    expect(() => loadConfig({ GATEWAY_SECRET: 'short' })).toThrow(/GATEWAY_SECRET/);
  });
  test('a URL of the wrong shape or scheme names its variable (no client stack trace later)', () => {
    expect(() => loadConfig({ REDIS_URL: 'bogus' })).toThrow(
      'invalid environment variable REDIS_URL: must be a redis:// or rediss:// URL, or none (single-node mode) (got "bogus")',
    );
    expect(() => loadConfig({ DATABASE_URL: 'bogus' })).toThrow(
      /^invalid environment variable DATABASE_URL: must be a postgres:\/\/ URL/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x/y' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'redis://a:1,b:2' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ STOREFRONT_SERVICE_URL: '127.0.0.1:48104' })).toThrow(
      'invalid environment variable STOREFRONT_SERVICE_URL: must be an http:// URL, such as http://127.0.0.1:48104 (got "127.0.0.1:48104")',
    );
    expect(() => loadConfig({ MANAGEMENT_SERVICE_URL: 'https://mg.internal' })).toThrow(/MANAGEMENT_SERVICE_URL/);
    // what people and clients are given, and the proxies trusted
    expect(() => loadConfig({ DASHBOARD_PUBLIC_URL: 'localhost:48006' })).toThrow(
      'invalid environment variable DASHBOARD_PUBLIC_URL: must be an http:// or https:// URL',
    );
    expect(() => loadConfig({ STOREFRONT_PUBLIC_URL: 'nope' })).toThrow(/STOREFRONT_PUBLIC_URL/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'nope' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ PROBLEM_TYPE_BASE: 'x' })).toThrow(/PROBLEM_TYPE_BASE: must be an absolute URI/);
    expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.1, 10.0.0.0/8' })).toThrow(
      /TRUSTED_PROXIES: must be comma-separated IP addresses, each a peer \(a range such as 10.0.0.0\/8 is not matched\)/,
    );
    // a whole number as written, not cut to one
    expect(() => loadConfig({ STOREFRONT_CACHE_MB: '1.5' })).toThrow(
      'invalid environment variable STOREFRONT_CACHE_MB: must be a whole number (got "1.5")',
    );
    expect(() => loadConfig({ UPSTREAM_TIMEOUT_MS: '10s' })).toThrow(/UPSTREAM_TIMEOUT_MS: must be a whole number/);
    for (const ok of [
      { REDIS_URL: 'none' },
      { DASHBOARD_PUBLIC_URL: 'https://dash.example.com', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
      { TRUSTED_PROXIES: '10.0.0.1, ::1', PROBLEM_TYPE_BASE: 'https://docs.example.com/problems#' },
      { STOREFRONT_CACHE_MB: ' 32 ' },
      { REDIS_URL: 'rediss://u:p@cache.example:6380/0' },
      { DATABASE_URL: 'postgresql://u@db.example/studio?sslmode=require' },
      { REDIS_CLUSTER_NODES: 'redis://a:7000, redis://b:7001' },
    ])
      expect(() => loadConfig(ok)).not.toThrow();
  });
});

describe('gateway signatures', () => {
  const caller = { studioId: 'std_1', keyId: 'key_1', scopes: ['classes:read'], operationId: 'op', requestId: 'req_1' };
  const secret = 'a-very-secret-secret';
  test('verify what was signed; refuse any change', () => {
    const h = new Headers(signedHeaders(secret, 'GET', '/v1/classes?limit=5', caller));
    expect(verifySignature(secret, 'GET', '/v1/classes?limit=5', h)).toEqual(caller);
    expect(verifySignature(secret, 'GET', '/v1/classes?limit=6', h)).toBeNull();
    expect(verifySignature(secret, 'POST', '/v1/classes?limit=5', h)).toBeNull();
    expect(verifySignature('another-secret-entirely', 'GET', '/v1/classes?limit=5', h)).toBeNull();
    h.set('x-gw-scopes', 'classes:read,classes:write');
    expect(verifySignature(secret, 'GET', '/v1/classes?limit=5', h)).toBeNull();
  });
  test('the signature is HMAC-SHA256 of the signed fields, call after call (the keyed state is copied, never reused)', () => {
    // docs/design/hostile-callers.md: ... request id, hex SHA-256 of the body (of no bytes when none), Idempotency-Key (empty when none)
    const noBody = createHash('sha256').update('').digest('hex');
    for (const path of ['/v1/a', '/v1/b', '/v1/a']) {
      const h = signedHeaders(secret, 'GET', path, caller, 1_700_000_000_000);
      const payload = ['1700000000000', 'GET', path, 'std_1', 'key_1', 'classes:read', 'op', 'req_1', noBody, ''].join(
        '\n',
      );
      expect(h['x-gw-signature']).toBe(createHmac('sha256', secret).update(payload).digest('hex'));
      expect(h['x-gw-body-sha256']).toBeUndefined(); // no body: nothing to send, the empty hash is implied
    }
    const body = '{"name":"Ana"}';
    const h = signedHeaders(secret, 'POST', '/v1/instructors', caller, 1_700_000_000_000, {
      body: new TextEncoder().encode(body),
      idempotencyKey: 'k-1',
    });
    const bodySha = createHash('sha256').update(body).digest('hex');
    const payload = [
      '1700000000000',
      'POST',
      '/v1/instructors',
      'std_1',
      'key_1',
      'classes:read',
      'op',
      'req_1',
      bodySha,
      'k-1',
    ].join('\n');
    expect(h['x-gw-signature']).toBe(createHmac('sha256', secret).update(payload).digest('hex'));
    expect(h['x-gw-body-sha256']).toBe(bodySha);
  });
  test('the body hash and Idempotency-Key are signed: another key, or another hash claimed, is refused', () => {
    const signed = signedHeaders(secret, 'POST', '/v1/instructors', caller, Date.now(), {
      body: '{"a":1}',
      idempotencyKey: 'k-1',
    });
    const h = new Headers({ ...signed, 'idempotency-key': 'k-1' });
    expect(verifySignature(secret, 'POST', '/v1/instructors', h)).toEqual(caller);
    expect(
      verifySignature(secret, 'POST', '/v1/instructors', new Headers({ ...signed, 'idempotency-key': 'k-2' })),
    ).toBeNull();
    expect(verifySignature(secret, 'POST', '/v1/instructors', new Headers(signed))).toBeNull(); // the key dropped
    const otherHash = createHash('sha256').update('{"a":2}').digest('hex');
    expect(
      verifySignature(
        secret,
        'POST',
        '/v1/instructors',
        new Headers({ ...signed, 'idempotency-key': 'k-1', 'x-gw-body-sha256': otherHash }),
      ),
    ).toBeNull();
  });
  test('expire after 60 s', () => {
    const h = new Headers(signedHeaders(secret, 'GET', '/x', caller, Date.now() - 61_000));
    expect(verifySignature(secret, 'GET', '/x', h)).toBeNull();
  });
});

describe('the operations table', () => {
  test('every write declares the event types it records (docs/design/events.md), reads declare none, and every type is emitted by some write', () => {
    // the sandbox reset deletes the sandbox's events and records none (docs/design/test-mode.md)
    const undeclared = OPERATIONS.filter(
      (o) => isWrite(o) && !('testOnly' in o) && !('emits' in o && o.emits.length),
    ).map((o) => o.id);
    expect(undeclared).toEqual([]);
    const readsThatEmit = OPERATIONS.filter((o) => !isWrite(o) && 'emits' in o).map((o) => o.id);
    expect(readsThatEmit).toEqual([]);
    const emitted = new Set(OPERATIONS.flatMap((o) => ('emits' in o ? [...o.emits] : [])));
    expect([...EVENT_TYPES].filter((t) => !emitted.has(t))).toEqual([]);
    // the noun of each type is a resource whose read scope shows it
    for (const t of EVENT_TYPES) expect(SCOPES).toContain(EVENT_RESOURCE_SCOPES[resourceOf(t)]);
  });
  test('"*:read" is any one read scope, and no write scope', () => {
    expect(scopeAllows(['coupons:read'], ANY_READ)).toBe(true);
    expect(scopeAllows(['classes:write', 'members:write'], ANY_READ)).toBe(false);
    expect(scopeAllows([], ANY_READ)).toBe(false);
    expect(scopeAllows(['nonsense:read'], ANY_READ)).toBe(false);
    expect(scopeAllows(['classes:read'], 'classes:read')).toBe(true);
    expect(scopeAllows(['classes:read'], 'classes:write')).toBe(false);
  });
  test("27 Management operations with ids, 8 reads without, the 9 reads by id of docs/design/resources.md, the 2 events reads, the sandbox reset, 6 Storefront reads, and each surface's key description", () => {
    expect(OPERATIONS.filter((o) => o.surface === 'storefront')).toHaveLength(7);
    expect(OPERATIONS.filter((o) => o.surface === 'management')).toHaveLength(48);
    expect(new Set(OPERATIONS.map((o) => o.id)).size).toBe(OPERATIONS.length);
    expect(new Set(OPERATIONS.map((o) => `${o.surface} ${o.method} ${o.path}`)).size).toBe(OPERATIONS.length);
    // one scope each, but the events operations, which take any read scope (docs/design/events.md)
    // the key's own description is every key's, whatever its scopes
    for (const o of OPERATIONS)
      if (o.surface === 'management' && o.id !== 'managementGetKey')
        expect([...SCOPES, ...TEST_SCOPES, ANY_READ]).toContain(o.scope!);
    expect(OPERATIONS.filter((o) => o.scope === null && o.surface === 'management').map((o) => o.id)).toEqual([
      'managementGetKey',
    ]);
    // the test-only scope is the test-only operation's, and only a test-only operation needs one
    expect(OPERATIONS.filter((o) => 'testOnly' in o).map((o) => [o.id, o.scope])).toEqual([
      ['managementResetSandbox', 'sandbox:write'],
    ]);
    expect(OPERATIONS.filter((o) => o.scope === ANY_READ).map((o) => o.id)).toEqual([
      'managementListEvents',
      'managementGetEvent',
    ]);
    expect(SCOPES).toHaveLength(18);
  });
});

test('every problem code renders with its status and a stable type', () => {
  for (const code of PROBLEM_CODES) {
    const b = problemBody(code, 'req_1', { typeBase: 'https://docs.example/problems#' });
    expect(b).toMatchObject({
      code,
      status: statusOf(code),
      type: `https://docs.example/problems#${code}`,
      instance: 'urn:request:req_1',
    });
  }
});

test("docs/design/errors.md's closed list is the vocabulary: every code, each with its status, and no other", async () => {
  const text = await Bun.file(`${import.meta.dir}/../../docs/design/errors.md`).text();
  const listed = new Map<string, number>();
  for (const row of text.matchAll(/^\| (\d{3}) +\| ([^|]+)\|/gm))
    for (const [, code] of row[2]!.matchAll(/`([a-z_]+)`/g)) listed.set(code!, Number(row[1]));
  expect([...listed.keys()].sort()).toEqual([...PROBLEM_CODES].sort());
  for (const code of PROBLEM_CODES) expect([code, listed.get(code)]).toEqual([code, statusOf(code)]);
});
