import { iso, isoOrNull, newId } from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { Address, Location, Room } from '@studio/shared/schemas';
import { afterSql, type Page, type PageParams, pageOf, sortKeySql } from '../kit/pagination';

interface LocationRow {
  id: string;
  name: string;
  timezone: string;
  address: Address | null;
  status: 'live' | 'deleted';
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
interface RoomRow {
  id: string;
  locationId: string;
  name: string;
  capacity: number | null;
  status: 'live' | 'deleted';
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const toLocation = (r: LocationRow): Location => ({
  id: r.id,
  name: r.name,
  timezone: r.timezone,
  address: r.address,
  status: r.status,
  deletedAt: isoOrNull(r.deletedAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});
const toRoom = (r: RoomRow): Room => ({
  id: r.id,
  locationId: r.locationId,
  name: r.name,
  capacity: r.capacity,
  status: r.status,
  deletedAt: isoOrNull(r.deletedAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

const LOCATION_COLUMNS = 'id, name, timezone, address, status, deleted_at, created_at, updated_at';
const ROOM_COLUMNS = 'id, location_id, name, capacity, status, deleted_at, created_at, updated_at';

/** Only the fields present in a patch, ready for `db(obj)`. */
const present = (patch: object) => Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));

export async function studioTimezone(db: Db, studioId: string): Promise<string> {
  const [row] = await db<{ timezone: string }[]>`select timezone from studios where id = ${studioId}`;
  return row?.timezone ?? 'UTC';
}

/** One page of the studio's live locations, keyset on (created_at, id) over `locations_studio`. */
export async function listLocationsPage(db: Db, studioId: string, p: PageParams): Promise<Page<Location>> {
  const rows = await db<(LocationRow & { sortKey: string })[]>`
    select ${db.unsafe(LOCATION_COLUMNS)}, ${sortKeySql(db, 'created_at')} as sort_key from locations
    where studio_id = ${studioId} and status = 'live' ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
  return pageOf(p, rows, toLocation);
}

/**
 * A live location; `lock` takes its row lock: `share` so rooms cannot be added under a
 * concurrent delete, `update` before changing it.
 */
export async function getLiveLocation(
  db: Db,
  studioId: string,
  id: string,
  lock: false | 'share' | 'update' = false,
): Promise<Location | null> {
  const [row] = await db<LocationRow[]>`
    select ${db.unsafe(LOCATION_COLUMNS)} from locations where studio_id = ${studioId} and id = ${id} and status = 'live'
    ${lock === 'share' ? db`for share` : lock === 'update' ? db`for update` : db``}`;
  return row ? toLocation(row) : null;
}

export async function insertLocation(
  db: Db,
  studioId: string,
  v: { name: string; timezone: string; address: Address | null },
): Promise<Location> {
  const [row] = await db<LocationRow[]>`
    insert into locations ${db({ id: newId('location'), studioId, name: v.name, timezone: v.timezone, address: v.address === null ? null : db.json(v.address) })}
    returning ${db.unsafe(LOCATION_COLUMNS)}`;
  return toLocation(row!);
}

export async function updateLocation(
  db: Db,
  studioId: string,
  id: string,
  patch: { name?: string; timezone?: string; address?: Address | null },
): Promise<Location | null> {
  const set = present({
    ...patch,
    address: patch.address === undefined ? undefined : patch.address === null ? null : db.json(patch.address),
  });
  const [row] = await db<LocationRow[]>`
    update locations set ${db({ ...set, updatedAt: new Date() })}
    where studio_id = ${studioId} and id = ${id} and status = 'live'
    returning ${db.unsafe(LOCATION_COLUMNS)}`;
  return row ? toLocation(row) : null;
}

/**
 * Locks every live location of the studio (in id order, so two deletes never deadlock) and
 * returns their ids. A concurrent delete waits here, then sees the other's committed result.
 */
export async function lockLiveLocationIds(db: Db, studioId: string): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    select id from locations where studio_id = ${studioId} and status = 'live' order by id for update`;
  return rows.map((r) => r.id);
}

/** Soft-deletes a location and its rooms: the location, and the rooms it deleted (in their order of creation). */
export async function markLocationDeleted(
  db: Db,
  studioId: string,
  id: string,
): Promise<{ location: Location; rooms: Room[] }> {
  const rooms = await db<RoomRow[]>`
    update rooms set status = 'deleted', deleted_at = now(), updated_at = now()
    where studio_id = ${studioId} and location_id = ${id} and status = 'live'
    returning ${db.unsafe(ROOM_COLUMNS)}`;
  const [row] = await db<LocationRow[]>`
    update locations set status = 'deleted', deleted_at = now(), updated_at = now()
    where studio_id = ${studioId} and id = ${id}
    returning ${db.unsafe(LOCATION_COLUMNS)}`;
  const byAge = (a: RoomRow, b: RoomRow) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1);
  return { location: toLocation(row!), rooms: rooms.sort(byAge).map(toRoom) };
}

/**
 * One page of a location's live rooms, keyset on (created_at, id) over `rooms_location`.
 * The caller checks first that the location is live (404 otherwise) and reads `p` with
 * `{ locationId }` as a filter, so a cursor of one location's rooms is refused on another's.
 */
export async function listRoomsPage(db: Db, studioId: string, p: PageParams, locationId: string): Promise<Page<Room>> {
  const rows = await db<(RoomRow & { sortKey: string })[]>`
    select ${db.unsafe(ROOM_COLUMNS)}, ${sortKeySql(db, 'created_at')} as sort_key from rooms
    where studio_id = ${studioId} and location_id = ${locationId} and status = 'live' ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
  return pageOf(p, rows, toRoom);
}

/**
 * A live room of a live location of the studio; null for a deleted room, a room of a deleted
 * location (deleting a location deletes its rooms; the `exists` keeps that true regardless), a
 * room of another location, or another studio's ids.
 */
export async function getLiveRoom(db: Db, studioId: string, locationId: string, roomId: string): Promise<Room | null> {
  const [row] = await db<RoomRow[]>`
    select ${db.unsafe(ROOM_COLUMNS)} from rooms
    where studio_id = ${studioId} and location_id = ${locationId} and id = ${roomId} and status = 'live'
      and exists (select 1 from locations l where l.studio_id = ${studioId} and l.id = ${locationId} and l.status = 'live')`;
  return row ? toRoom(row) : null;
}

export async function insertRoom(
  db: Db,
  studioId: string,
  locationId: string,
  v: { name: string; capacity: number | null },
): Promise<Room> {
  const [row] = await db<RoomRow[]>`
    insert into rooms ${db({ id: newId('room'), studioId, locationId, name: v.name, capacity: v.capacity })}
    returning ${db.unsafe(ROOM_COLUMNS)}`;
  return toRoom(row!);
}

/** A live room of the location, locked for the rest of the transaction. */
export async function lockLiveRoom(db: Db, studioId: string, locationId: string, id: string): Promise<Room | null> {
  const [row] = await db<RoomRow[]>`
    select ${db.unsafe(ROOM_COLUMNS)} from rooms
    where studio_id = ${studioId} and location_id = ${locationId} and id = ${id} and status = 'live' for update`;
  return row ? toRoom(row) : null;
}

export async function updateRoom(
  db: Db,
  studioId: string,
  locationId: string,
  id: string,
  patch: { name?: string; capacity?: number | null },
): Promise<Room | null> {
  const [row] = await db<RoomRow[]>`
    update rooms set ${db({ ...present(patch), updatedAt: new Date() })}
    where studio_id = ${studioId} and location_id = ${locationId} and id = ${id} and status = 'live'
    returning ${db.unsafe(ROOM_COLUMNS)}`;
  return row ? toRoom(row) : null;
}

export async function markRoomDeleted(db: Db, studioId: string, locationId: string, id: string): Promise<Room | null> {
  const [row] = await db<RoomRow[]>`
    update rooms set status = 'deleted', deleted_at = now(), updated_at = now()
    where studio_id = ${studioId} and location_id = ${locationId} and id = ${id} and status = 'live'
    returning ${db.unsafe(ROOM_COLUMNS)}`;
  return row ? toRoom(row) : null;
}

/**
 * The live occurrences still to come at a location (any of its rooms) or in one room: how many, and the next.
 * Read after the venue's row is locked, so no class created meanwhile can add one unseen (a create locks it to share).
 */
export async function upcomingAt(
  db: Db,
  studioId: string,
  where: { locationId: string } | { roomId: string },
): Promise<{ count: number; next: { id: string; startsAt: Date } | null }> {
  const venue = 'roomId' in where ? db`room_id = ${where.roomId}` : db`location_id = ${where.locationId}`;
  const rows = await db<{ id: string; startsAt: Date; count: number }[]>`
    select id, starts_at, (count(*) over ())::int as count from occurrences
    where studio_id = ${studioId} and ${venue} and status = 'scheduled' and ends_at > now()
    order by starts_at, id limit 1`;
  const [row] = rows;
  return row ? { count: row.count, next: { id: row.id, startsAt: row.startsAt } } : { count: 0, next: null };
}
