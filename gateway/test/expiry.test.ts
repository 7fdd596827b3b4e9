/**
 * Rolling and expiry (docs/design/keys.md): a rolled key's old text works until its expiresAt and is
 * refused from that instant with 401 api_key_expired, on both surfaces and on every replica,
 * whatever they have cached.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { rollApiKey } from '@studio/control';
import { SCOPES } from '@studio/shared';
import { quitRedis } from '@studio/shared/io';
import { expectProblem, type Stack, serveSurface, startStack } from '../../test/harness';
import { needs } from '../../test/needs';
import { createGateway, type Gateway } from '../src/app';

needs('redis').describe('a rolled key on two replicas', () => {
  let s: Stack;
  let replica: Gateway;
  let servers: ReturnType<typeof serveSurface>[] = [];
  const duplicate = () => s.redis.duplicate();
  let sub: ReturnType<typeof duplicate>;
  beforeAll(async () => {
    s = await startStack();
    sub = duplicate();
    await sub.connect();
    replica = createGateway({ config: s.config, sql: s.sql, redis: s.redis, subscriber: sub });
    await replica.start();
    servers = [serveSurface(replica.storefront), serveSurface(replica.management)];
  });
  afterAll(async () => {
    for (const server of servers) server.stop(true);
    await replica?.stop();
    await quitRedis(sub);
    await s?.close();
  });

  const call = (base: string, key: string) =>
    fetch(`${base}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } });

  test.each(['publishable', 'secret'] as const)(
    'a rolled %s key: the old text works until its expiresAt, then 401 api_key_expired everywhere',
    async (kind) => {
      const st = await s.studio();
      const old = await s.key(st.id, kind, kind === 'secret' ? SCOPES : []);
      const bases =
        kind === 'secret'
          ? [s.managementUrl, `http://127.0.0.1:${servers[1]!.port}`]
          : [s.storefrontUrl, `http://127.0.0.1:${servers[0]!.port}`];
      for (const base of bases) expect((await call(base, old.key)).status).toBe(200); // cached on both replicas

      const rolled = await rollApiKey(s.sql, s.bus, old.id, 700);
      expect(rolled.propagated).toBe(true);
      expect(rolled.record).toMatchObject({ kind, name: 'test', studioId: st.id });
      const expiresAt = Date.parse(rolled.previous.expiresAt);
      expect(expiresAt).toBeGreaterThan(Date.now());
      // the grace period: both texts work on both replicas (and the old record is cached again)
      for (const base of bases) {
        expect((await call(base, old.key)).status).toBe(200);
        expect((await call(base, rolled.key)).status).toBe(200);
      }
      await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 20);
      for (const base of bases) {
        const body = await expectProblem(await call(base, old.key), 401, 'api_key_expired');
        expect(String(body.detail)).toContain('expired');
        expect((await call(base, rolled.key)).status).toBe(200);
      }
    },
  );

  test('rolling with 0 stops the old key at once; a revoked key cannot be rolled', async () => {
    const st = await s.studio();
    const old = await s.key(st.id, 'secret', ['instructors:read']);
    expect((await call(s.managementUrl, old.key)).status).toBe(200);
    await rollApiKey(s.sql, s.bus, old.id, 0);
    await expectProblem(await call(s.managementUrl, old.key), 401, 'api_key_expired');
    await s.revoke(old.id);
    await expect(rollApiKey(s.sql, s.bus, old.id, 0)).rejects.toThrow('no live key');
  });

  test('an expired key cannot be rolled, and a key is rolled once even after its replacement was revoked', async () => {
    const st = await s.studio();
    const ended = await s.key(st.id, 'secret', ['instructors:read']);
    await s.sql`update api_keys set expires_at = now() - interval '1 second' where id = ${ended.id}`;
    await expect(rollApiKey(s.sql, s.bus, ended.id, 0)).rejects.toThrow('no live key');
    const old = await s.key(st.id, 'secret', ['instructors:read']);
    const rolled = await rollApiKey(s.sql, s.bus, old.id, 3_600_000);
    await s.revoke(rolled.record.id);
    await expect(rollApiKey(s.sql, s.bus, old.id, 3_600_000)).rejects.toThrow('was already rolled');
    const [{ n }] = (await s.sql`select count(*)::int as n from api_keys where rolled_from = ${old.id}`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(1);
  });
});
