import { afterAll, beforeAll, describe, expect, setSystemTime, test } from 'bun:test';
import { generateKey, redisNames } from '@studio/shared';
import { type Stack, startStack } from '../../../test/harness';
import { MemoryBuckets } from '../../src/limits/memory-buckets';
import { RateLimiter } from '../../src/limits/rate-limiter';
import { RedisBuckets } from '../../src/limits/redis-buckets';
import { keyStep } from '../../src/pipeline/key';
import { ctxOf } from './helpers';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const withAuth = (authorization?: string) =>
  ctxOf('http://gw/v1/classes', authorization ? { headers: { authorization } } : {});

describe('key step', () => {
  test('no header, a malformed one, a bad checksum: refused without any lookup', () => {
    const key = keyStep(stack.gateway.keys);
    expect(key(withAuth())).toEqual({ problem: 'api_key_missing' });
    expect(key(withAuth('Basic abc'))).toEqual({ problem: 'api_key_invalid' });
    expect(key(withAuth('Bearer svc_sk_notakey'))).toEqual({ problem: 'api_key_invalid' });
  });

  test('a real key is looked up once (Postgres), then answered from memory synchronously; an unknown one is null', async () => {
    const studio = await stack.studio();
    const { key: text, id } = await stack.key(studio.id, 'secret', ['classes:read']);
    const key = keyStep(stack.gateway.keys);
    const c = withAuth(`Bearer ${text}`);
    const first = key(c);
    expect(first).toBeInstanceOf(Promise);
    expect(((await first) as { rec: { id: string } }).rec.id).toBe(id);
    expect(c.hash).toMatch(/^[0-9a-f]{64}$/);
    const again = key(withAuth(`Bearer ${text}`));
    expect(again).not.toBeInstanceOf(Promise);
    expect((again as { rec: { studioId: string } }).rec.studioId).toBe(studio.id);

    // a well-formed key nobody issued: looked up, not found
    const other = await stack.key(studio.id, 'secret', []);
    await stack.revoke(other.id);
    await stack.sql`delete from api_keys where id = ${other.id}`;
    expect(await key(withAuth(`Bearer ${other.key}`))).toEqual({ rec: null });
  });

  test('a lookup charged while the limiter failed open (Redis away) gives back no token it never took', async () => {
    const studio = await stack.studio();
    const { key: text } = await stack.key(studio.id, 'secret', ['classes:read']);
    const limiter = new RateLimiter(new RedisBuckets(null, redisNames('phantom:')), {
      secret: '1:1',
      publishableClient: '1:1',
      publishable: '1:1',
      unknownKey: '1:1',
    });
    const c = withAuth(`Bearer ${text}`);
    expect(((await keyStep(stack.gateway.keys, limiter)(c)) as { rec: { studioId: string } }).rec.studioId).toBe(
      studio.id,
    );
    expect(limiter.unknownKeyGroup(c.client ?? 'unknown').left).toBe(0);
  });

  test("an address over its unknown-key limit still gets its real keys whose records are past their minute (a NAT's users)", async () => {
    const studio = await stack.studio();
    const { key: text, id } = await stack.key(studio.id, 'secret', ['classes:read']);
    const limiter = new RateLimiter(new MemoryBuckets(), {
      secret: '100:100',
      publishableClient: '100:100',
      publishable: '100:100',
      unknownKey: '1:2', // the first lookup of the real key spends one (its refund lasts a lease), a random key the other
    });
    const key = keyStep(stack.gateway.keys, limiter);
    expect(((await key(withAuth(`Bearer ${text}`))) as { rec: { id: string } }).rec.id).toBe(id);
    setSystemTime(new Date(Date.now() + 61_000)); // the record past its minute, within its stale window
    try {
      // random keys from the same address: the first is looked up, the second refused
      const random = () => withAuth(`Bearer ${generateKey('secret')}`);
      expect(await key(random())).toEqual({ rec: null });
      expect(await key(random())).toHaveProperty('limited');
      expect(((await key(withAuth(`Bearer ${text}`))) as { rec: { id: string } }).rec.id).toBe(id);
    } finally {
      setSystemTime();
    }
  });

  test('an Authorization header padded with spaces still names its key, and is not kept (10,000 of 16 KB would be 160 MB)', async () => {
    const studio = await stack.studio();
    const { key: text, id } = await stack.key(studio.id, 'secret', ['classes:read']);
    const key = keyStep(stack.gateway.keys);
    const before = key.memoized();
    const padded = withAuth(`Bearer${' '.repeat(16_000)}${text}`);
    expect(((await key(padded)) as { rec: { id: string } }).rec.id).toBe(id);
    expect(key.memoized()).toBe(before);
    await key(withAuth(`Bearer ${text}`));
    expect(key.memoized()).toBe(before + 1); // a header as clients send it is kept
  });
});
