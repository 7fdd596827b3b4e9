/**
 * Reading one record (docs/design/resources.md "Reading one record"), through the gateway: every record a
 * `Location` header names reads back as its create (or update, or list item) answered it, with
 * the resource's read scope, and is 404 `not_found` from another studio, once deleted
 * (locations, rooms, videos), or when the path id cannot be one of ours.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { newId, SCOPES, type Scope } from '@studio/shared';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { classBody, future, instructor, mgWrite, twoStudios } from './fixtures';

let s: Stack;
let key: string;
let otherKey: string;
let studioId: string;
let otherStudioId: string;
beforeAll(async () => {
  s = await startStack();
  ({ studioId, otherStudioId, key, otherKey } = await twoStudios(s, [...SCOPES]));
});
afterAll(() => s.close());

type Json = Record<string, unknown> & { id: string };
/** A record as its write answered it, the path that reads it, and the `Location` the create named. */
interface Made {
  id: string;
  path: string;
  body: Json;
  location: string | null;
}

let seq = 0;
const uniq = () => `${Date.now().toString(36)}${(seq++).toString(36)}`.toUpperCase();
const write = (method: string, path: string, k: string, body?: unknown) => mgWrite(s, method, path, k, body);

async function created(k: string, path: string, body: unknown): Promise<{ body: Json; location: string | null }> {
  const res = await write('POST', path, k, body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return { body: (await res.json()) as Json, location: res.headers.get('location') };
}
async function ok(res: Response): Promise<Json> {
  if (res.status !== 200) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Json;
}

/** Videos have no create operation: inserted as the uploader would, read back through their PATCH answer. */
async function video(k: string, studio: string): Promise<Made> {
  const id = newId('content');
  await s.sql`insert into content ${s.sql({ id, studioId: studio, title: 'Morning flow', durationSeconds: 1800 })}`;
  const body = await ok(await write('PATCH', `/v1/content/${id}`, k, { description: 'Read me' }));
  return { id, path: `/v1/content/${id}`, body, location: null };
}

async function location(k: string): Promise<Made> {
  const c = await created(k, '/v1/locations', {
    name: 'Main hall',
    address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' },
  });
  return { id: c.body.id, path: `/v1/locations/${c.body.id}`, ...c };
}

async function room(k: string, loc?: Made): Promise<Made & { locationId: string }> {
  const l = loc ?? (await location(k));
  const c = await created(k, `${l.path}/rooms`, { name: 'Room A', capacity: 12 });
  return { id: c.body.id, path: `${l.path}/rooms/${c.body.id}`, locationId: l.id, ...c };
}

interface Resource {
  name: string;
  scope: Scope;
  prefix: string;
  /** A fresh record of `studio`, written with its key `k`. */
  make(k: string, studio: string): Promise<Made>;
  /** The read path with `id` in place of the record's own id (rooms: in either position). */
  paths(m: Made, id: string): string[];
}

const simple = (base: string) => (_m: Made, id: string) => [`${base}/${id}`];

const RESOURCES: Resource[] = [
  {
    name: 'class',
    scope: 'classes:read',
    prefix: 'cls',
    paths: simple('/v1/classes'),
    async make(k, studio) {
      const c = await created(
        k,
        '/v1/classes',
        classBody(await instructor(s, studio), { startsAt: future(3), planIds: [] }),
      );
      return { id: c.body.id, path: `/v1/classes/${c.body.id}`, ...c };
    },
  },
  {
    name: 'member',
    scope: 'members:read',
    prefix: 'mem',
    paths: simple('/v1/members'),
    async make(k) {
      const c = await created(k, '/v1/members/invites', {
        email: `r${uniq()}@Reads.test`,
        name: 'Rea',
        role: 'front_desk',
      });
      return { id: c.body.id, path: `/v1/members/${c.body.id}`, ...c };
    },
  },
  {
    // no create of its own: the list item of its class's schedule is the reference body
    name: 'occurrence',
    scope: 'schedule:read',
    prefix: 'occ',
    paths: simple('/v1/schedule'),
    async make(k, studio) {
      const cls = await created(
        k,
        '/v1/classes',
        classBody(await instructor(s, studio), { startsAt: future(4), recurrence: { intervalDays: 1, count: 2 } }),
      );
      const page = (await ok(await s.mg(`/v1/schedule?classId=${cls.body.id}`, k))) as unknown as { data: Json[] };
      expect(page.data).toHaveLength(2);
      const body = page.data[1]!;
      return { id: body.id, path: `/v1/schedule/${body.id}`, body, location: null };
    },
  },
  { name: 'content', scope: 'content:read', prefix: 'vid', paths: simple('/v1/content'), make: video },
  {
    name: 'plan',
    scope: 'plans:read',
    prefix: 'pln',
    paths: simple('/v1/plans'),
    async make(k) {
      const c = await created(k, '/v1/plans', {
        name: 'Monthly',
        type: 'membership',
        description: 'All you can flow',
        config: { priceCents: 9900, currency: 'USD', interval: 'month' },
      });
      return { id: c.body.id, path: `/v1/plans/${c.body.id}`, ...c };
    },
  },
  {
    name: 'instructor',
    scope: 'instructors:read',
    prefix: 'ins',
    paths: simple('/v1/instructors'),
    async make(k) {
      const c = await created(k, '/v1/instructors', {
        name: 'Ana',
        email: 'ana@reads.test',
        disciplines: ['yoga', 'pilates'],
      });
      return { id: c.body.id, path: `/v1/instructors/${c.body.id}`, ...c };
    },
  },
  {
    name: 'location',
    scope: 'locations:read',
    prefix: 'loc',
    paths: simple('/v1/locations'),
    make: (k) => location(k),
  },
  {
    name: 'room',
    scope: 'locations:read',
    prefix: 'room',
    make: (k) => room(k),
    paths: (m, id) => {
      const [, , , locationId, , roomId] = m.path.split('/');
      return [`/v1/locations/${locationId}/rooms/${id}`, `/v1/locations/${id}/rooms/${roomId}`];
    },
  },
  {
    name: 'coupon',
    scope: 'coupons:read',
    prefix: 'cpn',
    paths: simple('/v1/coupons'),
    async make(k) {
      const c = await created(k, '/v1/coupons', {
        code: `read-${uniq()}`,
        config: { kind: 'amount', amountOffCents: 500, currency: 'USD' },
        maxRedemptions: 10,
      });
      return { id: c.body.id, path: `/v1/coupons/${c.body.id}`, ...c };
    },
  },
  {
    // managementGetProgram already exists: the control that the rest fail only for want of routes
    name: 'program',
    scope: 'programs:read',
    prefix: 'prg',
    paths: simple('/v1/programs'),
    async make(k) {
      const c = await created(k, '/v1/programs', {
        name: '30-day challenge',
        pricing: 'paid',
        priceCents: 4900,
        currency: 'USD',
      });
      return { id: c.body.id, path: `/v1/programs/${c.body.id}`, ...c };
    },
  },
];

describe('reading one record (docs/design/resources.md)', () => {
  for (const r of RESOURCES) {
    test(`${r.name}: own studio 200 with the body its write answered; the Location reads the same`, async () => {
      const m = await r.make(key, studioId);
      expect(m.id.startsWith(`${r.prefix}_`)).toBe(true);
      expect(await ok(await s.mg(m.path, key))).toEqual(m.body);
      if (m.location !== null) {
        expect(m.location).toBe(m.path);
        expect(await ok(await s.mg(m.location, key))).toEqual(m.body);
      }
      // the read scope alone is enough
      const readOnly = (await s.key(studioId, 'secret', [r.scope])).key;
      expect(await ok(await s.mg(m.path, readOnly))).toEqual(m.body);
    });

    test(`${r.name}: another studio's id is 404 not_found, both ways`, async () => {
      const theirs = await r.make(otherKey, otherStudioId);
      await expectProblem(await s.mg(theirs.path, key), 404, 'not_found');
      const mine = await r.make(key, studioId);
      await expectProblem(await s.mg(mine.path, otherKey), 404, 'not_found');
      expect((await s.mg(theirs.path, otherKey)).status).toBe(200);
    });

    test(`${r.name}: a key without ${r.scope} is 403 scope_required`, async () => {
      const m = await r.make(key, studioId);
      const noRead = (
        await s.key(
          studioId,
          'secret',
          SCOPES.filter((x) => x !== r.scope),
        )
      ).key;
      await expectProblem(await s.mg(m.path, noRead), 403, 'scope_required');
    });

    test(`${r.name}: a path id that cannot be ours is 404 not_found, never 500`, async () => {
      const m = await r.make(key, studioId);
      const rest = m.id.slice(m.id.indexOf('_') + 1);
      const wrongPrefix = r.prefix === 'pln' ? 'cls' : 'pln';
      const bad = [
        '%00',
        `${r.prefix}_%00`,
        `${r.prefix}_${rest}%00`,
        `${r.prefix}_${'a'.repeat(61)}`,
        `${r.prefix}_${rest}${'a'.repeat(65)}`,
        `${wrongPrefix}_${rest}`,
        rest,
        `${r.prefix.toUpperCase()}_${rest}`,
        `${r.prefix}_${rest}%20`,
        `${r.prefix}_%F0%9F%A7%98`,
        `${r.prefix}_${rest.slice(0, -1)}`, // well-formed, but no such record
      ];
      for (const id of bad) {
        for (const path of r.paths(m, id)) await expectProblem(await s.mg(path, key), 404, 'not_found');
      }
    });
  }

  test('a deleted location, its rooms, a deleted room and a deleted video are 404; the others stay', async () => {
    const keep = await location(key);
    const gone = await location(key);
    const roomOfGone = await room(key, gone);
    const deletedRoom = await room(key, keep);
    const keptRoom = await room(key, keep);

    expect(await ok(await write('DELETE', deletedRoom.path, key))).toMatchObject({
      id: deletedRoom.id,
      status: 'deleted',
    });
    await expectProblem(await s.mg(deletedRoom.path, key), 404, 'not_found');
    expect(await ok(await s.mg(keptRoom.path, key))).toEqual(keptRoom.body);

    expect(await ok(await write('DELETE', gone.path, key))).toMatchObject({ id: gone.id, status: 'deleted' });
    await expectProblem(await s.mg(gone.path, key), 404, 'not_found');
    await expectProblem(await s.mg(roomOfGone.path, key), 404, 'not_found');
    expect(await ok(await s.mg(keep.path, key))).toEqual(keep.body);

    const v = await video(key, studioId);
    expect(await ok(await write('DELETE', v.path, key))).toMatchObject({ id: v.id });
    await expectProblem(await s.mg(v.path, key), 404, 'not_found');
  });

  test('a room is read only under its own location', async () => {
    const a = await room(key);
    const b = await location(key);
    await expectProblem(await s.mg(`${b.path}/rooms/${a.id}`, key), 404, 'not_found');
    const theirs = await room(otherKey);
    await expectProblem(await s.mg(`/v1/locations/${a.locationId}/rooms/${theirs.id}`, key), 404, 'not_found');
    await expectProblem(await s.mg(`/v1/locations/${theirs.locationId}/rooms/${a.id}`, key), 404, 'not_found');
  });

  test('cancelled, archived and inactive records read back in their final state', async () => {
    const byName = (n: string) => RESOURCES.find((r) => r.name === n)!;
    const finals: [Made, Promise<Response>][] = [];
    const cls = await byName('class').make(key, studioId);
    finals.push([cls, write('DELETE', cls.path, key)]);
    const member = await byName('member').make(key, studioId);
    finals.push([member, write('POST', `${member.path}/cancel`, key)]);
    const plan = await byName('plan').make(key, studioId);
    finals.push([plan, write('DELETE', plan.path, key)]);
    const coupon = await byName('coupon').make(key, studioId);
    finals.push([coupon, write('DELETE', coupon.path, key)]);
    const ins = await byName('instructor').make(key, studioId);
    finals.push([ins, write('PATCH', ins.path, key, { active: false })]);
    for (const [m, answer] of finals) {
      const final = await ok(await answer);
      expect(final.id).toBe(m.id);
      expect(await ok(await s.mg(m.path, key))).toEqual(final);
    }
  });
});
