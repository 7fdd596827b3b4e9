/**
 * The SDK against a running stack (real HTTP, Postgres and Redis; docs/design/sdk.md): a write whose answer is lost
 * is retried with its one idempotency key and acts once; a 429 is waited out; a 422 is not retried; lists walk every
 * page; each surface answers its own key, test keys included.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ensureDefaultSandbox } from '@studio/management-service/sandboxes';
import { SCOPES, scopesOfMode } from '@studio/shared';
import { type Stack, startStack } from '../../test/harness';
import {
  AuthenticationError,
  ConnectionError,
  NotFoundError,
  RateLimitError,
  Studio,
  StudioApiError,
  UnprocessableEntityError,
  VERSION,
} from '../src/index';
import { countingFetch, startProxy } from './helpers';

let s: Stack;
let studioId: string;
let secret: `svc_sk_${string}`;
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio({ name: 'SDK Studio' })).id;
  secret = (await s.key(studioId, 'secret', SCOPES)).key as `svc_sk_${string}`;
});
afterAll(() => s?.close());

const instructorsNamed = async (name: string) =>
  Number(
    (await s.sql`select count(*)::int as n from instructors where studio_id = ${studioId} and name = ${name}`)[0]!.n,
  );

describe('retries', () => {
  test('a create whose answer is lost after it committed is retried with the same key and creates one record', async () => {
    const proxy = await startProxy(s.managementUrl);
    try {
      const studio = new Studio({
        apiKey: secret,
        baseUrl: proxy.url,
        appInfo: { name: 'sdk-test', version: '1.2.3' },
      });
      proxy.loseNextAnswer('POST');
      const name = `Lost Answer ${crypto.randomUUID()}`;
      const created = await studio.instructors.create({ name, disciplines: ['yoga'] });
      expect(created.name).toBe(name);
      expect(proxy.lost).toBe(1);
      const posts = proxy.seen.filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(2);
      const [first, second] = posts.map((p) => p.headers['idempotency-key']);
      expect(first).toMatch(/^[0-9a-f-]{36}$/);
      expect(second).toBe(first!);
      expect(await instructorsNamed(name)).toBe(1);
      expect(posts[0]!.headers['user-agent']).toBe(`studio-sdk-typescript/${VERSION} sdk-test/1.2.3`);
      // a read carries no Idempotency-Key
      await studio.instructors.retrieve(created.id);
      expect(proxy.seen.at(-1)!.headers['idempotency-key']).toBeUndefined();
    } finally {
      proxy.stop();
    }
  });

  test("the caller's own idempotency key is sent, and a second call with it replays the first", async () => {
    const studio = new Studio({ apiKey: secret, baseUrl: s.managementUrl });
    const { fetch, attempts } = countingFetch();
    const studio2 = new Studio({ apiKey: secret, baseUrl: s.managementUrl, fetch });
    const idempotencyKey = crypto.randomUUID();
    const name = `Own Key ${crypto.randomUUID()}`;
    const a = await studio.instructors.create({ name }, { idempotencyKey });
    const b = await studio2.instructors.create({ name }, { idempotencyKey });
    expect(b).toEqual(a);
    expect(attempts).toEqual([201]);
    expect(await instructorsNamed(name)).toBe(1);
  });

  test('a 422 is not retried: it throws with its code and field errors', async () => {
    const { fetch, attempts } = countingFetch();
    const studio = new Studio({ apiKey: secret, baseUrl: s.managementUrl, fetch });
    const err = await studio.instructors.create({ name: '', disciplines: [] }).catch((e) => e);
    expect(err).toBeInstanceOf(UnprocessableEntityError);
    expect(err).toBeInstanceOf(StudioApiError);
    expect(err.status).toBe(422);
    expect(err.code).toBe('validation_failed');
    expect(err.errors.map((e: { path: string }) => e.path)).toContain('/body/name');
    expect(err.requestId).toMatch(/^req_/);
    expect(err.instance).toBeString();
    expect(attempts).toEqual([422]);
  });

  test('a 404 is a NotFoundError; a refused key an AuthenticationError; neither is retried', async () => {
    const { fetch, attempts } = countingFetch();
    const studio = new Studio({ apiKey: secret, baseUrl: s.managementUrl, fetch });
    const missing = await studio.classes.retrieve('cls_0000000000000000000000').catch((e) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.code).toBe('not_found');
    const bad = new Studio({ apiKey: `svc_sk_${'x'.repeat(32)}`, baseUrl: s.managementUrl, fetch });
    const refused = await bad.key.retrieve().catch((e) => e);
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect(refused.code).toBe('api_key_invalid');
    expect(attempts).toEqual([404, 401]);
  });

  test('a refused connection is retried maxRetries times, then a ConnectionError', async () => {
    const { fetch, attempts } = countingFetch();
    const dead = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() });
    const url = `http://127.0.0.1:${dead.port}`;
    dead.stop(true);
    const studio = new Studio({ apiKey: secret, baseUrl: url, fetch, maxRetries: 1 });
    const err = await studio.key.retrieve().catch((e) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(attempts).toEqual(['error', 'error']);
  });

  test('a 429 with Retry-After is waited out and retried', async () => {
    const limited = await startStack({ env: { RATE_LIMIT_SECRET: '1:1' } });
    try {
      const id = (await limited.studio()).id;
      const key = (await limited.key(id, 'secret', ['instructors:read'])).key as `svc_sk_${string}`;
      const { fetch, attempts, retryAfter } = countingFetch();
      const studio = new Studio({ apiKey: key, baseUrl: limited.managementUrl, fetch });
      await studio.instructors.list();
      const began = performance.now();
      const page = await studio.instructors.list();
      expect(page.data).toEqual([]);
      expect(attempts).toEqual([200, 429, 200]);
      // waited what the 429 asked, not the first backoff step (0.5 s)
      const asked = Number(retryAfter[1]);
      expect(asked).toBeGreaterThanOrEqual(1);
      expect(performance.now() - began).toBeGreaterThanOrEqual(asked * 1000 - 50);
      // with no retries allowed, the caller gets the 429
      const none: any = await studio.instructors.list(undefined, { maxRetries: 0 }).catch((e) => e);
      expect(none).toBeInstanceOf(RateLimitError);
      expect(none.code).toBe('rate_limited');
    } finally {
      await limited.close();
    }
  });
});

describe('pagination', () => {
  test('for await walks 250 records in order, each once; the page-at-a-time form agrees', async () => {
    const id = (await s.studio({ name: 'Paged' })).id;
    const key = (await s.key(id, 'secret', SCOPES)).key as `svc_sk_${string}`;
    const studio = new Studio({ apiKey: key, baseUrl: s.managementUrl });
    for (let i = 0; i < 250; i += 25)
      await Promise.all(
        Array.from({ length: 25 }, (_, j) =>
          studio.instructors.create({ name: `Teacher ${String(i + j).padStart(3, '0')}` }),
        ),
      );
    const walked: { id: string; createdAt: string }[] = [];
    for await (const instructor of studio.instructors.list({ limit: 100 })) walked.push(instructor);
    expect(walked).toHaveLength(250);
    expect(new Set(walked.map((w) => w.id)).size).toBe(250);
    const expected = await s.sql<{ id: string }[]>`
      select id from instructors where studio_id = ${id} order by created_at, id`;
    expect(walked.map((w) => w.id)).toEqual(expected.map((r) => r.id));

    let page = await studio.instructors.list({ limit: 100 });
    const sizes = [page.data.length];
    while (page.hasNextPage()) {
      page = (await page.next())!;
      sizes.push(page.data.length);
    }
    expect(sizes).toEqual([100, 100, 50]);
    expect(await page.next()).toBeNull();
    const pages = [];
    for await (const p of studio.instructors.list({ limit: 100 }).pages()) pages.push(p.data.length);
    expect(pages).toEqual([100, 100, 50]);
    // resumed later from a stored cursor
    const first = await studio.instructors.list({ limit: 100 });
    const rest: string[] = [];
    for await (const r of studio.instructors.list({ cursor: first.nextCursor!, limit: 100 })) rest.push(r.id);
    expect(rest).toEqual(expected.slice(100).map((r) => r.id));
  }, 60_000);
});

describe('surfaces and keys', () => {
  test("a publishable key reads the Storefront; GET /v1/key describes either key; sub-resources take the parent's id first", async () => {
    const pk = (await s.key(studioId, 'publishable')).key as `svc_pk_${string}`;
    const storefront = new Studio({ apiKey: pk, baseUrl: s.storefrontUrl });
    expect(storefront.surface).toBe('storefront');
    expect((await storefront.classes.list()).classes).toEqual([]);
    expect((await storefront.key.retrieve()).kind).toBe('publishable');
    const management = new Studio({ apiKey: secret, baseUrl: s.managementUrl });
    expect((await management.key.retrieve()).kind).toBe('secret');
    const location = await management.locations.create({ name: 'Main', timezone: 'Europe/Berlin' });
    const room = await management.locations.rooms.create(location.id, { name: 'Studio A', capacity: 20 });
    expect(await management.locations.rooms.retrieve(location.id, room.id)).toEqual(room);
    const renamed = await management.locations.rooms.update(location.id, room.id, { name: 'Studio B' });
    expect(renamed.name).toBe('Studio B');
    // a key in a plain string says its surface; a surface the key contradicts is refused at once
    const plain: string = pk;
    expect(new Studio({ apiKey: plain, surface: 'storefront', baseUrl: s.storefrontUrl }).surface).toBe('storefront');
    expect(() => new Studio({ apiKey: plain, surface: 'management' })).toThrow(TypeError);
  });

  test('test keys work unchanged: the sandbox reads, writes and resets', async () => {
    const { sandbox } = await ensureDefaultSandbox(s.sql, studioId);
    const key = (await s.key(sandbox.id, 'secret', scopesOfMode('test'))).key as `svc_sk_${string}`;
    const studio = new Studio({ apiKey: key, baseUrl: s.managementUrl });
    expect((await studio.key.retrieve()).mode).toBe('test');
    await studio.instructors.create({ name: 'Sandbox Only' });
    const reset = await studio.sandbox.reset();
    expect(reset.id).toBe(sandbox.id);
    const names = [];
    for await (const i of studio.instructors.list()) names.push(i.name);
    expect(names).not.toContain('Sandbox Only');
  });
});
