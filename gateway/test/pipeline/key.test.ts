import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, startStack } from '../../../test/harness';
import { redisNames } from '../../src/keys/redis-names';
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
});
