import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBase62 } from '@studio/shared';
import { connectRedis, createRedis, deleteByPrefix, quitRedis, type Redis } from '@studio/shared/io';
import { has, needs } from '../../test/needs';
import { type CacheTier, type SharedTier, TieredCache } from '../src/cache/tiered';

let redis: Redis;
const prefix = `t_tiered_${randomBase62(8)}:`;
beforeAll(async () => {
  if (!has('redis')) return; // only the shared tier's tests use it
  redis = createRedis(process.env.TEST_REDIS_URL!, 'test redis', process.env.TEST_REDIS_CLUSTER_NODES);
  await connectRedis(redis);
});
afterAll(async () => {
  if (!redis) return;
  await deleteByPrefix(redis, prefix);
  await quitRedis(redis);
});

/** A real Redis as the shared tier, JSON values. */
const redisTier = (): SharedTier<string | null> => ({
  get: async (k) => {
    const raw = await redis.get(prefix + k);
    return raw === null ? undefined : (JSON.parse(raw) as string | null);
  },
  set: async (k, v) => void (await redis.set(prefix + k, JSON.stringify(v), { EX: 60 })),
});

function cache(o: Partial<ConstructorParameters<typeof TieredCache<string | null>>[0]> = {}) {
  const reads: CacheTier[] = [];
  const c = new TieredCache<string | null>({
    freshMs: (v) => (v === null ? 20 : 60_000),
    staleMs: 0,
    maxEntries: 100,
    onRead: (t) => reads.push(t),
    ...o,
  });
  c.enabled = true;
  return { c, reads };
}

describe('tiered cache', () => {
  test('memory answers synchronously once filled; a negative entry lives shorter', async () => {
    const { c, reads } = cache();
    let calls = 0;
    const origin = async () => (calls++, 'v');
    expect(c.peek('a')).toBeUndefined();
    expect(await c.get('a', origin)).toBe('v');
    expect(c.peek('a')).toBe('v');
    expect(await c.get('a', origin)).toBe('v');
    expect(calls).toBe(1);
    expect(await c.get('missing', async () => null)).toBeNull();
    expect(c.peek('missing')).toBeNull();
    await Bun.sleep(30);
    expect(c.peek('missing')).toBeUndefined();
    expect(c.peek('a')).toBe('v');
    expect(reads).toEqual(['origin', 'memory', 'origin']);
  });

  test('concurrent misses share one origin call', async () => {
    const { c } = cache();
    let calls = 0;
    const origin = async () => (calls++, await Bun.sleep(10), 'v');
    expect(await Promise.all(Array.from({ length: 10 }, () => c.get('k', origin)))).toEqual(Array(10).fill('v'));
    expect(calls).toBe(1);
  });

  test('stale-while-revalidate: past fresh, the old value is served while one refresh runs', async () => {
    const { c, reads } = cache({ freshMs: () => 10, staleMs: 1_000 });
    let version = 0;
    const origin = async () => (await Bun.sleep(5), `v${++version}`);
    expect(await c.get('k', origin)).toBe('v1');
    await Bun.sleep(15);
    expect(await c.get('k', origin)).toBe('v1'); // stale, refresh started
    expect(await c.get('k', origin)).toBe('v1'); // still stale, same refresh
    expect(await c.fill('k', origin)).toBe('v2'); // joins the one refresh running
    expect(version).toBe(2);
    expect(reads).toEqual(['origin', 'stale', 'stale', 'origin']);
  });

  test('an eviction during a fill: the read is not kept, and later callers do not join it', async () => {
    const { c } = cache();
    let release!: () => void;
    const slow = c.get('k', () => new Promise((r) => (release = () => r('before'))));
    await Bun.sleep(1);
    c.evict('k'); // the write lands while the read is in flight
    const after = c.get('k', async () => 'after');
    release();
    expect(await slow).toBe('before');
    expect(await after).toBe('after');
    expect(c.peek('k')).toBe('after');
  });

  test('a group drop forgets every key of the group, and only those', async () => {
    const { c } = cache({ groupOf: (k) => k.split('/')[0]! });
    for (const k of ['s1/a', 's1/b', 's2/a']) await c.get(k, async () => k);
    c.drop('s1');
    expect([c.peek('s1/a'), c.peek('s1/b'), c.peek('s2/a')]).toEqual([undefined, undefined, 's2/a']);
  });

  needs('redis').test(
    'while not trusted (broadcasts may be missed), every read goes to the origin and nothing is kept',
    async () => {
      const { c } = cache({ shared: redisTier() });
      c.enabled = false;
      let calls = 0;
      await redis.set(`${prefix}untrusted`, JSON.stringify('from redis'));
      expect(await c.get('untrusted', async () => (calls++, 'from origin'))).toBe('from origin');
      expect(await c.get('untrusted', async () => (calls++, 'from origin'))).toBe('from origin');
      expect(calls).toBe(2);
      expect(c.peek('untrusted')).toBeUndefined();
    },
  );

  needs('redis').test(
    'the shared tier (Redis) answers before the origin, and is offered what the origin read',
    async () => {
      const { c, reads } = cache({ shared: redisTier() });
      await redis.set(`${prefix}shared`, JSON.stringify('from redis'));
      expect(await c.get('shared', async () => 'from origin')).toBe('from redis');
      expect(await c.get('fresh', async () => 'from origin')).toBe('from origin');
      await Bun.sleep(10);
      expect(JSON.parse((await redis.get(`${prefix}fresh`))!)).toBe('from origin');
      expect(reads).toEqual(['shared', 'origin']);
      // a shared tier that fails is skipped
      const broken = cache({
        shared: {
          get: async () => {
            throw new Error('down');
          },
          set: async () => {},
        },
      });
      expect(await broken.c.get('x', async () => 'from origin')).toBe('from origin');
    },
  );

  test('bounded in bytes: the oldest entries go until a new one fits; one larger than the bound is not kept', async () => {
    const { c } = cache({ sizeOf: (v) => v?.length ?? 0, maxBytes: 10 });
    for (const k of ['a', 'b', 'c']) await c.get(k, async () => k.repeat(4));
    expect([c.peek('a'), c.peek('b'), c.peek('c')]).toEqual([undefined, 'bbbb', 'cccc']);
    expect(c.bytes).toBe(8);
    await c.get('big', async () => 'x'.repeat(11));
    expect(c.peek('big')).toBeUndefined();
    expect(c.bytes).toBe(8);
    c.drop('b');
    expect(c.bytes).toBe(4);
  });

  test('values of a kind apart (negative entries) have their own cap: a flood of them evicts none of the others', async () => {
    const { c } = cache({ maxEntries: 3, apart: { is: (v) => v === null, maxEntries: 5 } });
    for (const k of ['live1', 'live2']) await c.get(k, async () => k);
    for (let i = 0; i < 100; i++) await c.get(`unknown${i}`, async () => null);
    expect([c.peek('live1'), c.peek('live2'), c.peek('unknown99'), c.peek('unknown0')]).toEqual([
      'live1',
      'live2',
      null,
      undefined,
    ]);
    expect(c.size).toBe(7);
  });

  test('expired entries are swept out without a read, and changes older than a sweep are forgotten', async () => {
    const { c } = cache({
      freshMs: () => 10,
      staleMs: 10,
      sweepMs: 15,
      sizeOf: () => 100,
      groupOf: (k) => k.split('/')[0]!,
    });
    for (let i = 0; i < 50; i++) await c.get(`s${i}/a`, async () => 'v');
    for (let i = 0; i < 50; i++) c.drop(`gone${i}`);
    expect([c.size, c.bytes, c.changes]).toEqual([50, 5_000, 50]);
    await Bun.sleep(80);
    expect([c.size, c.bytes, c.changes]).toEqual([0, 0, 0]);
    // a fill that started before the forgotten changes is not kept (it cannot be told apart from one that raced a write)
    const old = c.token();
    c.drop('s1');
    await Bun.sleep(80);
    c.put('s1/a', 'stale read', old);
    expect(c.peek('s1/a')).toBeUndefined();
    c.put('s1/a', 'fresh read', c.token());
    expect(c.peek('s1/a')).toBe('fresh read');
  });

  test("a group's byte share: filling it evicts the group's own oldest, never another group's; a drop still finds every key", async () => {
    const { c } = cache({ sizeOf: (v) => v?.length ?? 0, maxBytes: 100, maxBytesPerGroup: 10, groupOf: (k) => k[0]! });
    await c.get('b1', async () => 'bbbb');
    for (const k of ['a1', 'a2', 'a3', 'a4']) await c.get(k, async () => 'aaaa');
    expect([c.peek('a1'), c.peek('a2'), c.peek('a3'), c.peek('a4')]).toEqual([undefined, undefined, 'aaaa', 'aaaa']);
    expect(c.peek('b1')).toBe('bbbb'); // the other group is untouched
    // an entry as large as the share empties its group first, and is still dropped with it
    await c.get('a5', async () => 'x'.repeat(10));
    expect([c.peek('a3'), c.peek('a4'), c.peek('a5')]).toEqual([undefined, undefined, 'x'.repeat(10)]);
    c.drop('a');
    expect(c.peek('a5')).toBeUndefined();
    expect(c.bytes).toBe(4);
  });

  test('bounded: the oldest entry goes first, overall and per group', async () => {
    const { c } = cache({ maxEntries: 3, maxPerGroup: 2, groupOf: (k) => k[0]! });
    for (const k of ['a1', 'a2', 'a3']) await c.get(k, async () => k);
    expect([c.peek('a1'), c.peek('a2'), c.peek('a3')]).toEqual([undefined, 'a2', 'a3']);
    for (const k of ['b1', 'c1']) await c.get(k, async () => k);
    expect([c.peek('a2'), c.peek('b1'), c.peek('c1')]).toEqual([undefined, 'b1', 'c1']);
  });
});
