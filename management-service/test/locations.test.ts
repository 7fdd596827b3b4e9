import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { Location, LocationPage, Room, RoomPage } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { classBody, instructor, mgWrite, studioWithKey, twoStudios } from './fixtures';

let s: Stack;
let key: string;
let otherKey: string;
beforeAll(async () => {
  s = await startStack();
  ({ key, otherKey } = await twoStudios(s, ['locations:read', 'locations:write'], { timezone: 'Europe/Berlin' }));
});
afterAll(() => s.close());

const write = (method: string, path: string, k: string, body?: unknown) => mgWrite(s, method, path, k, body);
const createLocation = async (k: string, body: Record<string, unknown> = {}) => {
  const res = await write('POST', '/v1/locations', k, { name: 'Main hall', ...body });
  expect(res.status).toBe(201);
  return (await res.json()) as Location;
};
const createRoom = async (k: string, locationId: string, body: Record<string, unknown> = {}) => {
  const res = await write('POST', `/v1/locations/${locationId}/rooms`, k, { name: 'Room A', ...body });
  expect(res.status).toBe(201);
  return (await res.json()) as Room;
};

describe('locations', () => {
  test("create: 201 + Location; timezone defaults to the studio's; address kept", async () => {
    const res = await write('POST', '/v1/locations', key, {
      name: 'Downtown',
      address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' },
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(Value.Check(Location, body)).toBe(true);
    expect(body).toMatchObject({
      name: 'Downtown',
      timezone: 'Europe/Berlin',
      status: 'live',
      deletedAt: null,
      address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' },
    });
    expect(body.id).toMatch(/^loc_/);
    expect(res.headers.get('location')).toBe(`/v1/locations/${body.id}`);
  });

  test('an IANA timezone is accepted (canonicalised); anything else is 422 validation_failed', async () => {
    expect((await createLocation(key, { timezone: 'America/New_York' })).timezone).toBe('America/New_York');
    expect((await createLocation(key, { timezone: 'utc' })).timezone).toBe('UTC');
    const p = await expectProblem(
      await write('POST', '/v1/locations', key, { name: 'X', timezone: 'Mars/Olympus' }),
      422,
      'validation_failed',
    );
    expect(p.errors).toEqual([{ path: '/body/timezone', message: expect.any(String) }]);
    const loc = await createLocation(key);
    await expectProblem(
      await write('PATCH', `/v1/locations/${loc.id}`, key, { timezone: 'Nowhere/Town' }),
      422,
      'validation_failed',
    );
  });

  test('422 validation_failed: missing name, unknown field, unknown address field', async () => {
    for (const body of [{}, { name: '' }, { name: 'A', floor: 2 }, { name: 'A', address: { street: 'x' } }]) {
      await expectProblem(await write('POST', '/v1/locations', key, body), 422, 'validation_failed');
    }
  });

  test("update: 200 with the record; other studio's location 404", async () => {
    const loc = await createLocation(key);
    const res = await write('PATCH', `/v1/locations/${loc.id}`, key, {
      name: 'Renamed',
      timezone: 'Asia/Tokyo',
      address: null,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: loc.id, name: 'Renamed', timezone: 'Asia/Tokyo', address: null });
    const theirs = await createLocation(otherKey);
    await expectProblem(await write('PATCH', `/v1/locations/${theirs.id}`, key, { name: 'Mine' }), 404, 'not_found');
    // which location comes first: another studio's is 404 whatever the body's values
    await expectProblem(
      await write('PATCH', `/v1/locations/${theirs.id}`, key, { timezone: 'Mars/Olympus' }),
      404,
      'not_found',
    );
    await expectProblem(await write('DELETE', `/v1/locations/${theirs.id}`, key), 404, 'not_found');
    await expectProblem(await s.mg(`/v1/locations/${theirs.id}/rooms`, key), 404, 'not_found');
    await expectProblem(await write('POST', `/v1/locations/${theirs.id}/rooms`, key, { name: 'R' }), 404, 'not_found');
    const [row] = await s.sql`select name, status from locations where id = ${theirs.id}`;
    expect(row).toEqual({ name: 'Main hall', status: 'live' });
  });

  test('delete: 200 with the final record; then 404 everywhere and gone from the list, rooms too', async () => {
    const loc = await createLocation(key, { name: 'Doomed' });
    const room = await createRoom(key, loc.id);
    const res = await write('DELETE', `/v1/locations/${loc.id}`, key);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Value.Check(Location, body)).toBe(true);
    expect(body).toMatchObject({ id: loc.id, status: 'deleted' });
    expect(body.deletedAt).not.toBeNull();
    await expectProblem(await write('DELETE', `/v1/locations/${loc.id}`, key), 404, 'not_found');
    await expectProblem(await write('PATCH', `/v1/locations/${loc.id}`, key, { name: 'Back' }), 404, 'not_found');
    await expectProblem(await s.mg(`/v1/locations/${loc.id}/rooms`, key), 404, 'not_found');
    await expectProblem(
      await write('PATCH', `/v1/locations/${loc.id}/rooms/${room.id}`, key, { name: 'R2' }),
      404,
      'not_found',
    );
    const list = await (await s.mg('/v1/locations', key)).json();
    expect(Value.Check(LocationPage, list)).toBe(true);
    expect(list.data.map((l: Location) => l.id)).not.toContain(loc.id);
  });

  test("409 last_venue: the studio's last live location cannot be deleted", async () => {
    const studio = await s.studio();
    const k = (await s.key(studio.id, 'secret', ['locations:read', 'locations:write'])).key;
    const a = await createLocation(k, { name: 'A' });
    const b = await createLocation(k, { name: 'B' });
    expect((await write('DELETE', `/v1/locations/${a.id}`, k)).status).toBe(200);
    await expectProblem(await write('DELETE', `/v1/locations/${b.id}`, k), 409, 'last_venue');
    const list = await (await s.mg('/v1/locations', k)).json();
    expect(list.data.map((l: Location) => l.id)).toEqual([b.id]);
  });

  test('two concurrent deletes of the last two locations: exactly one wins, the other is 409 last_venue', async () => {
    for (let round = 0; round < 5; round++) {
      const studio = await s.studio();
      const k = (await s.key(studio.id, 'secret', ['locations:read', 'locations:write'])).key;
      const [a, b] = await Promise.all([createLocation(k, { name: 'A' }), createLocation(k, { name: 'B' })]);
      const [ra, rb] = await Promise.all([
        write('DELETE', `/v1/locations/${a!.id}`, k),
        write('DELETE', `/v1/locations/${b!.id}`, k),
      ]);
      expect([ra.status, rb.status].sort()).toEqual([200, 409]);
      await expectProblem(ra.status === 409 ? ra : rb, 409, 'last_venue');
      const [{ live }] =
        (await s.sql`select count(*)::int as live from locations where studio_id = ${studio.id} and status = 'live'`) as unknown as [
          { live: number },
        ];
      expect(live).toBe(1);
    }
  });
});

describe('a venue where occurrences are still to come', () => {
  test('neither the location nor its room can be deleted (409 venue_in_use naming the next); once the class is cancelled, both can', async () => {
    const { studio, write: w } = await studioWithKey(s);
    const ins = await instructor(s, studio.id);
    const a = await (await w('POST', '/v1/locations', { name: 'A' })).json();
    await w('POST', '/v1/locations', { name: 'B' });
    const room = await (await w('POST', `/v1/locations/${a.id}/rooms`, { name: 'Studio 1' })).json();
    const cls = await (
      await w(
        'POST',
        '/v1/classes',
        classBody(ins, { locationId: a.id, roomId: room.id, recurrence: { intervalDays: 7, count: 2 } }),
      )
    ).json();
    const [first] = await s.sql`select id from occurrences where class_id = ${cls.id} order by starts_at limit 1`;
    for (const path of [`/v1/locations/${a.id}/rooms/${room.id}`, `/v1/locations/${a.id}`]) {
      const refused = await expectProblem(await w('DELETE', path), 409, 'venue_in_use');
      expect(refused.detail).toContain(`2 upcoming occurrences are held in this`);
      expect(refused.detail).toContain(first!.id);
    }
    expect((await w('DELETE', `/v1/classes/${cls.id}`)).status).toBe(200);
    expect((await w('DELETE', `/v1/locations/${a.id}/rooms/${room.id}`)).status).toBe(200);
    expect((await w('DELETE', `/v1/locations/${a.id}`)).status).toBe(200);
  });
});

describe('rooms', () => {
  test('create, list, update, delete with their shapes', async () => {
    const loc = await createLocation(key);
    const res = await write('POST', `/v1/locations/${loc.id}/rooms`, key, { name: 'Studio 1', capacity: 20 });
    expect(res.status).toBe(201);
    const room = await res.json();
    expect(Value.Check(Room, room)).toBe(true);
    expect(room).toMatchObject({ locationId: loc.id, name: 'Studio 1', capacity: 20, status: 'live' });
    expect(room.id).toMatch(/^room_/);
    expect(res.headers.get('location')).toBe(`/v1/locations/${loc.id}/rooms/${room.id}`);
    const second = await createRoom(key, loc.id, { name: 'Studio 2' });
    expect(second.capacity).toBeNull();

    const list = await (await s.mg(`/v1/locations/${loc.id}/rooms`, key)).json();
    expect(Value.Check(RoomPage, list)).toBe(true);
    expect(list.data.map((r: Room) => r.id)).toEqual([room.id, second.id]);

    const upd = await write('PATCH', `/v1/locations/${loc.id}/rooms/${room.id}`, key, { capacity: 25 });
    expect(upd.status).toBe(200);
    expect(await upd.json()).toMatchObject({ id: room.id, name: 'Studio 1', capacity: 25 });

    const del = await write('DELETE', `/v1/locations/${loc.id}/rooms/${room.id}`, key);
    expect(del.status).toBe(200);
    expect(await del.json()).toMatchObject({ id: room.id, status: 'deleted' });
    await expectProblem(await write('DELETE', `/v1/locations/${loc.id}/rooms/${room.id}`, key), 404, 'not_found');
    await expectProblem(
      await write('PATCH', `/v1/locations/${loc.id}/rooms/${room.id}`, key, { name: 'X' }),
      404,
      'not_found',
    );
    const after = await (await s.mg(`/v1/locations/${loc.id}/rooms`, key)).json();
    expect(after.data.map((r: Room) => r.id)).toEqual([second.id]);
  });

  test('capacity must be 1..10000; unknown fields are 422', async () => {
    const loc = await createLocation(key);
    for (const body of [
      { name: 'R', capacity: 0 },
      { name: 'R', capacity: 10001 },
      { name: 'R', capacity: 2.5 },
      { capacity: 5 },
      { name: 'R', seats: 4 },
    ]) {
      await expectProblem(await write('POST', `/v1/locations/${loc.id}/rooms`, key, body), 422, 'validation_failed');
    }
    expect((await createRoom(key, loc.id, { capacity: 10000 })).capacity).toBe(10000);
    const room = await createRoom(key, loc.id, { capacity: 1 });
    await expectProblem(
      await write('PATCH', `/v1/locations/${loc.id}/rooms/${room.id}`, key, { capacity: -1 }),
      422,
      'validation_failed',
    );
  });

  test('a room of another studio, or of another location, is 404', async () => {
    const mine = await createLocation(key);
    const other = await createLocation(key);
    const room = await createRoom(key, mine.id);
    await expectProblem(
      await write('PATCH', `/v1/locations/${other.id}/rooms/${room.id}`, key, { name: 'X' }),
      404,
      'not_found',
    );
    await expectProblem(await write('DELETE', `/v1/locations/${other.id}/rooms/${room.id}`, key), 404, 'not_found');
    const theirLoc = await createLocation(otherKey);
    const theirRoom = await createRoom(otherKey, theirLoc.id);
    await expectProblem(
      await write('PATCH', `/v1/locations/${theirLoc.id}/rooms/${theirRoom.id}`, key, { name: 'X' }),
      404,
      'not_found',
    );
    await expectProblem(
      await write('DELETE', `/v1/locations/${theirLoc.id}/rooms/${theirRoom.id}`, key),
      404,
      'not_found',
    );
    const [row] = await s.sql`select name, status from rooms where id = ${theirRoom.id}`;
    expect(row).toEqual({ name: 'Room A', status: 'live' });
  });
});
