import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { brotliDecompressSync } from 'node:zlib';
import { OPERATIONS, operationsOf } from '@studio/shared';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { inHours, instructor, klass } from './fixtures';

let s: Stack;
let studio: { id: string };
let key: string;
let ana: string;
beforeAll(async () => {
  s = await startStack();
  studio = await s.studio({ name: 'Http Studio' });
  key = (await s.key(studio.id, 'publishable')).key;
  ana = await instructor(s.sql, studio.id, { name: 'Ana' });
  await klass(s.sql, studio.id, { instructorId: ana, title: 'Flow', startsAt: inHours(3) });
});
afterAll(() => s.close());

const PATHS = operationsOf('storefront')
  .filter((o) => o.id !== 'storefrontGetSite')
  .map((o) => o.path);
// as a write announces it, by Redis or (single-node) Postgres
const announce = (studioId: string) => s.bus.storefrontChanged(studioId);

describe('ETag and 304', () => {
  test.each(PATHS)('%s: ETag, Cache-Control, 304 on If-None-Match, 200 on another tag', async (path) => {
    for (let round = 0; round < 2; round++) {
      // first from the service, then from the gateway's cache
      const res = await s.sf(path, key);
      expect(res.status).toBe(200);
      const etag = res.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-z]+"$/);
      expect(res.headers.get('cache-control')).toBe('public, max-age=30');
      expect(res.headers.get('vary')).toContain('Authorization');
      expect(res.headers.get('content-type')).toStartWith('application/json');
      const body = await res.text();

      const again = await s.sf(path, key, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('x-request-id')).toStartWith('req_');
      expect(await again.text()).toBe('');
      const listed = await s.sf(path, key, { headers: { 'if-none-match': `"nope", W/${etag}` } });
      expect(listed.status).toBe(304);
      const other = await s.sf(path, key, { headers: { 'if-none-match': '"stale"' } });
      expect(other.status).toBe(200);
      expect(await other.text()).toBe(body);
    }
  });

  test('the service itself answers 304 when the gateway cache is off', async () => {
    s.gateway.storefrontCache.enabled = false;
    try {
      const etag = (await s.sf('/v1/config', key)).headers.get('etag')!;
      expect((await s.sf('/v1/config', key, { headers: { 'if-none-match': etag } })).status).toBe(304);
    } finally {
      s.gateway.storefrontCache.enabled = true;
    }
  });

  test('the tag changes when the data changes', async () => {
    const before = (await s.sf('/v1/instructors', key)).headers.get('etag')!;
    await instructor(s.sql, studio.id, { name: 'Bea' });
    await announce(studio.id);
    await Bun.sleep(50);
    const res = await s.sf('/v1/instructors', key, { headers: { 'if-none-match': before } });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).not.toBe(before);
    expect(((await res.json()) as { instructors: { name: string }[] }).instructors.map((i) => i.name)).toEqual([
      'Ana',
      'Bea',
    ]);
  });
});

describe('no stale answers after a change', () => {
  test('a change announced on the invalidation channel shows at once (the cache is really used before it)', async () => {
    const names = async () =>
      ((await (await s.sf('/v1/instructors', key)).json()) as { instructors: { name: string }[] }).instructors.map(
        (i) => i.name,
      );
    const before = await names();
    await s.sql`update instructors set name = 'Ana Renamed' where id = ${ana}`;
    expect(await names()).toEqual(before); // unannounced direct write: still the cached answer (bounded by the TTL)
    await announce(studio.id);
    await Bun.sleep(50);
    expect(await names()).toContain('Ana Renamed');
  });

  test('a Management write through the gateway shows on the Storefront at once', async () => {
    const secret = (await s.key(studio.id, 'secret', ['instructors:write', 'instructors:read'])).key;
    await s.sf('/v1/instructors', key); // fill the cache
    const res = await s.mg('/v1/instructors', secret, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ name: 'Carla New' }),
    });
    expect(res.status).toBe(201);
    const { instructors } = (await (await s.sf('/v1/instructors', key)).json()) as { instructors: { name: string }[] };
    expect(instructors.map((i) => i.name)).toContain('Carla New');
  });

  test("another studio's announcement leaves this studio's cache, and never mixes data", async () => {
    const other = await s.studio({ name: 'Elsewhere' });
    const otherKey = (await s.key(other.id, 'publishable')).key;
    const mine = await (await s.sf('/v1/config', key)).json();
    const theirs = await (await s.sf('/v1/config', otherKey)).json();
    expect((mine as { studio: { id: string } }).studio.id).toBe(studio.id);
    expect((theirs as { studio: { id: string } }).studio.id).toBe(other.id);
  });
});

test('CORS preflight from a browser origin needs no key', async () => {
  const res = await fetch(`${s.storefrontUrl}/v1/classes`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://lotus.example',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization, if-none-match',
    },
  });
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('access-control-allow-methods')).toContain('GET');
  expect(res.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('authorization');
  expect(res.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('if-none-match');
  const get = await s.sf('/v1/classes', key, { headers: { origin: 'https://lotus.example' } });
  expect(get.headers.get('access-control-allow-origin')).toBe('*');
  expect(get.headers.get('access-control-expose-headers')).toContain('ETag');
});

test.each(['POST', 'PUT', 'PATCH', 'DELETE'])(
  '%s on the Storefront surface: 405 problem+json with Allow',
  async (method) => {
    const res = await s.sf('/v1/classes', key, { method, headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.headers.get('allow')).toBe('GET');
    await expectProblem(res, 405, 'method_not_allowed');
  },
);

test('a secret key on the Storefront: 401 api_key_wrong_kind; no key: 401 api_key_missing', async () => {
  const secret = (await s.key(studio.id, 'secret', ['classes:read'])).key;
  await expectProblem(await s.sf('/v1/classes', secret), 401, 'api_key_wrong_kind');
  await expectProblem(await s.sf('/v1/classes', null), 401, 'api_key_missing');
});

describe('OpenAPI document and docs page on the gateway', () => {
  test('/openapi.json: OpenAPI 3.1, PublishableKeyAuth, every Storefront operation with its problems', async () => {
    const res = await fetch(`${s.storefrontUrl}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<
        string,
        Record<string, { operationId: string; security: unknown; responses: Record<string, unknown> }>
      >;
    };
    expect(doc.openapi).toStartWith('3.1');
    expect(doc.components.securitySchemes.PublishableKeyAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ops = OPERATIONS.filter((o) => o.surface === 'storefront');
    expect(Object.keys(doc.paths).sort()).toEqual(ops.map((o) => o.path).sort());
    for (const op of ops) {
      const entry = doc.paths[op.path]!.get!;
      expect(entry.operationId).toBe(op.id);
      expect(entry.security).toEqual([{ PublishableKeyAuth: [] }]);
      for (const status of ['200', '304', '401', '429']) expect(Object.keys(entry.responses)).toContain(status);
    }
    expect(Object.keys(doc.paths['/v1/site']!.get!.responses)).toContain('404');
    expect(Object.keys(doc.paths['/v1/classes']!.get!.responses)).toContain('422');
  });

  test('/docs loads the spec from the gateway origin', async () => {
    const res = await fetch(`${s.storefrontUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/html');
    const html = await res.text();
    const attr = /data-configuration="([^"]*)"/.exec(html)![1]!.replaceAll('&quot;', '"');
    const config = JSON.parse(attr) as { url: string };
    expect(config.url).toBe('/openapi.json');
    expect((await fetch(new URL(config.url, `${s.storefrontUrl}/docs`))).status).toBe(200);
  });
});

describe('compression', () => {
  test('a gzip-accepting client gets the cached answer gzipped, with its own validator', async () => {
    for (let i = 0; i < 15; i++)
      await klass(s.sql, studio.id, { instructorId: ana, title: `Gz ${i}`, startsAt: inHours(100 + i) });
    await announce(studio.id);
    await Bun.sleep(20);
    const plain = await s.sf('/v1/classes', key, { headers: { 'accept-encoding': 'identity' } });
    const plainBody = await plain.text();
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plainBody.length).toBeGreaterThan(1024);
    for (let i = 0; i < 2; i++) {
      // a miss (filled from upstream), then a hit
      const raw = await fetch(`${s.storefrontUrl}/v1/classes`, {
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' },
        decompress: false,
      } as RequestInit);
      expect(raw.headers.get('content-encoding')).toBe('gzip');
      expect(raw.headers.get('vary')).toContain('Accept-Encoding');
      const etag = raw.headers.get('etag')!;
      expect(etag).toBe(`W/${plain.headers.get('etag')}`);
      const bytes = new Uint8Array(await raw.arrayBuffer());
      expect(bytes.byteLength).toBeLessThan(plainBody.length / 3);
      expect(new TextDecoder().decode(Bun.gunzipSync(bytes))).toBe(plainBody);
      const again = await s.sf('/v1/classes', key, { headers: { 'accept-encoding': 'gzip', 'if-none-match': etag } });
      expect(again.status).toBe(304);
    }
    const refused = await s.sf('/v1/classes', key, { headers: { 'accept-encoding': 'gzip;q=0, identity' } });
    expect(refused.headers.get('content-encoding')).toBeNull();
  });

  test('a client that accepts brotli (every browser over HTTPS) gets it in preference to gzip; q=0 refuses it', async () => {
    const plainBody = await (await s.sf('/v1/classes', key, { headers: { 'accept-encoding': 'identity' } })).text();
    const gz = await fetch(`${s.storefrontUrl}/v1/classes`, {
      headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' },
      decompress: false,
    } as RequestInit);
    const gzBytes = (await gz.arrayBuffer()).byteLength;
    for (const accept of ['gzip, deflate, br, zstd', 'br', 'br;q=0.5, gzip;q=0.4']) {
      const raw = await fetch(`${s.storefrontUrl}/v1/classes`, {
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': accept },
        decompress: false,
      } as RequestInit);
      expect(raw.headers.get('content-encoding')).toBe('br');
      expect(raw.headers.get('etag')).toBe(gz.headers.get('etag'));
      const bytes = new Uint8Array(await raw.arrayBuffer());
      expect(bytes.byteLength).toBeLessThan(gzBytes);
      expect(new TextDecoder().decode(brotliDecompressSync(bytes))).toBe(plainBody);
    }
    const refused = await fetch(`${s.storefrontUrl}/v1/classes`, {
      headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'br;q=0, gzip' },
      decompress: false,
    } as RequestInit);
    expect(refused.headers.get('content-encoding')).toBe('gzip');
    await refused.arrayBuffer();
  });
});
