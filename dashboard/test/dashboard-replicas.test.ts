/**
 * A revoke, roll or website change made in the dashboard process returns once every gateway confirmed it (docs/design/
 * keys.md): the next call on any replica is refused, whatever it had cached. With Redis, two gateway replicas beside
 * the dashboard; in single-node mode, the one gateway, told over Postgres NOTIFY.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createGateway, type Gateway } from '@studio/gateway';
import { quitRedis } from '@studio/shared/io';
import { inMode, MODES, type Stack, serveSurface, startStack } from '../../test/harness';
import { inEachMode } from '../../test/needs';
import { postForm, signIn } from './dashboard-helpers';

for (const mode of MODES) {
  inEachMode(mode).describe(`${mode} mode`, () => {
    let s: Stack;
    let replica: Gateway | null = null;
    let server: ReturnType<typeof serveSurface> | null = null;
    let sub: Stack['redis'] | null = null;
    /** Each gateway's Management surface: the stack's, and in Redis mode a second replica's. */
    let gateways: string[] = [];
    /** Each gateway's Storefront surface, likewise. */
    let storefronts: string[] = [];
    let sfServer: ReturnType<typeof serveSurface> | null = null;
    beforeAll(async () => {
      s = await startStack(inMode(mode));
      gateways = [s.managementUrl];
      storefronts = [s.storefrontUrl];
      if (mode === 'single-node') return; // one gateway only (the gateway lock)
      sub = s.redis.duplicate();
      await sub.connect();
      replica = createGateway({ config: s.config, sql: s.sql, redis: s.redis, subscriber: sub });
      await replica.start();
      server = serveSurface(replica.management);
      gateways.push(`http://127.0.0.1:${server.port}`);
      sfServer = serveSurface(replica.storefront);
      storefronts.push(`http://127.0.0.1:${sfServer.port}`);
    });
    afterAll(async () => {
      server?.stop(true);
      sfServer?.stop(true);
      await replica?.stop();
      if (sub) await quitRedis(sub);
      await s?.close();
    });

    const call = (base: string, key: string) =>
      fetch(`${base}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

    test('a key revoked in the dashboard is refused by the next call on every gateway', async () => {
      const studio = await s.studio();
      const { cookie, csrf } = await signIn(s, studio.id);
      const { key, id } = await s.key(studio.id, 'secret', ['instructors:read'], 'replicated');
      // every gateway has the key cached (twice: memory, and Redis where there is one)
      for (const base of gateways)
        expect([base, await call(base, key), await call(base, key)]).toEqual([base, 200, 200]);
      const began = performance.now();
      const done = await postForm(s, `/keys/${id}/revoke`, { csrf, confirm: 'yes' }, cookie);
      expect(done.status).toBe(303);
      // confirmed by every gateway, not left to the 2 s the revoke waits at most for a confirmation
      expect(performance.now() - began).toBeLessThan(1_500);
      for (const base of gateways) expect([base, await call(base, key)]).toEqual([base, 401]);
    });

    test('a key rolled with "now" in the dashboard is refused at once on every gateway; its replacement works', async () => {
      const studio = await s.studio();
      const { cookie, csrf } = await signIn(s, studio.id);
      const { key, id } = await s.key(studio.id, 'secret', ['instructors:read'], 'rolled');
      for (const base of gateways) expect(await call(base, key)).toBe(200);
      const rolled = await postForm(s, `/keys/${id}/roll`, { csrf, grace: 'now' }, cookie);
      expect(rolled.status).toBe(201);
      const next = /<code id="new-key" class="secret">([^<]+)<\/code>/.exec(await rolled.text())![1]!;
      for (const base of gateways)
        expect([base, await call(base, key), await call(base, next)]).toEqual([base, 401, 200]);
    });

    test("a publishable key's websites changed in the dashboard hold at once on every gateway", async () => {
      const studio = await s.studio();
      const { cookie, csrf } = await signIn(s, studio.id);
      const { key, id } = await s.key(studio.id, 'publishable', [], 'site');
      const from = (base: string) =>
        fetch(`${base}/v1/instructors`, {
          headers: { authorization: `Bearer ${key}`, origin: 'https://elsewhere.example' },
        }).then((r) => r.status);
      for (const base of storefronts) expect([base, await from(base)]).toEqual([base, 200]);
      const saved = await postForm(s, `/keys/${id}/origins`, { csrf, origins: 'https://lotus.example' }, cookie);
      expect(saved.status).toBe(303);
      for (const base of storefronts) expect([base, await from(base)]).toEqual([base, 403]);
    });
  });
}
