/** Only a Management write to what the Storefront shows (`changesStorefront` on its row) drops the studio's cached Storefront answers. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startStack, type Stack } from '../../test/harness';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

test('a write to members leaves the Storefront cache (the next read is still a hit); one to classes drops it', async () => {
  const st = await s.studio();
  const publishable = (await s.key(st.id, 'publishable')).key;
  const secret = (await s.key(st.id, 'secret', ['members:write', 'classes:write'])).key;
  const ana = `ins_${crypto.randomUUID().replaceAll('-', '')}`;
  await s.sql`insert into instructors (id, studio_id, name) values (${ana}, ${st.id}, 'Ana')`;
  const names = async () => ((await (await s.sf('/v1/instructors', publishable)).json()) as { instructors: { name: string }[] }).instructors.map((i) => i.name);
  const write = (path: string, body: unknown) => s.mg(path, secret, {
    method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify(body),
  });

  expect(await names()).toEqual(['Ana']); // now in the gateway's cache
  // a direct write, announced to no one: only a read that misses the cache can see it
  await s.sql`update instructors set name = 'Ana Renamed' where id = ${ana}`;

  expect((await write('/v1/members/invites', { email: `m${Date.now()}@invalidation.test`, name: 'Mia' })).status).toBe(201);
  expect(await names()).toEqual(['Ana']); // a hit: members are not on the Storefront

  const startsAt = new Date(Math.floor((Date.now() + 2 * 86_400_000) / 60_000) * 60_000).toISOString();
  expect((await write('/v1/classes', { title: 'Flow', mode: 'broadcast', instructorId: ana, startsAt, durationMinutes: 60 })).status).toBe(201);
  expect(await names()).toEqual(['Ana Renamed']); // dropped: the read went to the service
});
