/**
 * Only a Management write to what the Storefront shows (`changesStorefront` on its row) drops the
 * studio's cached Storefront answers; a change announced by another process (the CLI's
 * site:publish) reaches the gateway's cache at once. With Redis, and in single-node mode, where
 * the announcement travels over Postgres NOTIFY (docs/design/single-node.md).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { inMode, MODES, type Stack, startStack } from '../../test/harness';
import { inEachMode } from '../../test/needs';

for (const mode of MODES)
  inEachMode(mode).describe(`Storefront invalidation (${mode})`, () => {
    let s: Stack;
    beforeAll(async () => (s = await startStack(inMode(mode))));
    afterAll(() => s.close());

    test('a write to members leaves the Storefront cache (the next read is still a hit); one to classes drops it', async () => {
      const st = await s.studio();
      const publishable = (await s.key(st.id, 'publishable')).key;
      const secret = (await s.key(st.id, 'secret', ['members:write', 'classes:write'])).key;
      const ana = `ins_${crypto.randomUUID().replaceAll('-', '')}`;
      await s.sql`insert into instructors (id, studio_id, name) values (${ana}, ${st.id}, 'Ana')`;
      const names = async () =>
        (
          (await (await s.sf('/v1/instructors', publishable)).json()) as { instructors: { name: string }[] }
        ).instructors.map((i) => i.name);
      const write = (path: string, body: unknown) =>
        s.mg(path, secret, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify(body),
        });

      expect(await names()).toEqual(['Ana']); // now in the gateway's cache
      // a direct write, announced to no one: only a read that misses the cache can see it
      await s.sql`update instructors set name = 'Ana Renamed' where id = ${ana}`;

      expect(
        (await write('/v1/members/invites', { email: `m${Date.now()}@invalidation.test`, name: 'Mia' })).status,
      ).toBe(201);
      expect(await names()).toEqual(['Ana']); // a hit: members are not on the Storefront

      const startsAt = new Date(Math.floor((Date.now() + 2 * 86_400_000) / 60_000) * 60_000).toISOString();
      expect(
        (
          await write('/v1/classes', {
            title: 'Flow',
            mode: 'broadcast',
            instructorId: ana,
            startsAt,
            durationMinutes: 60,
          })
        ).status,
      ).toBe(201);
      expect(await names()).toEqual(['Ana Renamed']); // dropped: the read went to the service
    });

    test("a change another process announces drops the studio's cached answers at once, and only that studio's", async () => {
      const [st, other] = [await s.studio(), await s.studio()];
      const [key, otherKey] = [(await s.key(st.id, 'publishable')).key, (await s.key(other.id, 'publishable')).key];
      const ids = [st.id, other.id].map(() => `ins_${crypto.randomUUID().replaceAll('-', '')}`);
      await s.sql`insert into instructors (id, studio_id, name) values (${ids[0]!}, ${st.id}, 'Ana'), (${ids[1]!}, ${other.id}, 'Bo')`;
      const names = async (k: string) =>
        ((await (await s.sf('/v1/instructors', k)).json()) as { instructors: { name: string }[] }).instructors.map(
          (i) => i.name,
        );
      expect([await names(key), await names(otherKey)]).toEqual([['Ana'], ['Bo']]); // both cached
      await s.sql`update instructors set name = name || ' Renamed' where id in ${s.sql(ids)}`;
      expect(await names(key)).toEqual(['Ana']); // unannounced: still the cached answer
      await s.bus.storefrontChanged(st.id); // as the CLI's site:publish does
      let seen: string[] = [];
      for (let i = 0; i < 50 && seen[0] !== 'Ana Renamed'; i++) {
        await Bun.sleep(10); // best effort and asynchronous by design: it arrives within milliseconds
        seen = await names(key);
      }
      expect(seen).toEqual(['Ana Renamed']);
      expect(await names(otherKey)).toEqual(['Bo']); // another studio's entries stay
    });
  });
