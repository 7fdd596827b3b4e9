import { AppError, iso, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import type {
  CreateLocationBody,
  CreateRoomBody,
  Location,
  Room,
  UpdateLocationBody,
  UpdateRoomBody,
} from '@studio/shared/schemas';
import { canonicalTimeZone } from '@studio/shared/schemas';
import { changedFields, event, unchanged, updated, type Written } from '../kit/events';
import * as q from './queries';

const locationNotFound = (id: string) => problems.notFound('location', id);
const roomNotFound = (id: string) => new AppError('not_found', { detail: `No room ${quote(id)} in this location.` }); // not the studio-wide wording

function timeZone(tz: string): string {
  const canonical = canonicalTimeZone(tz);
  if (!canonical) {
    throw problems.invalidFields([
      { path: '/body/timezone', message: 'must be an IANA time zone, e.g. Europe/Berlin' },
    ]);
  }
  return canonical;
}

export async function createLocation(
  tx: Tx,
  studioId: string,
  body: CreateLocationBody,
): Promise<Written<Location, 'location.created'>> {
  const timezone = body.timezone === undefined ? await q.studioTimezone(tx, studioId) : timeZone(body.timezone);
  const location = await q.insertLocation(tx, studioId, { name: body.name, timezone, address: body.address ?? null });
  return { record: location, events: [event('location.created', location)] };
}

/** Only what differs is written (the time zone compared in its canonical name). */
export async function updateLocation(
  tx: Tx,
  studioId: string,
  id: string,
  body: UpdateLocationBody,
): Promise<Written<Location, 'location.updated'>> {
  // which location first (404), then the values (422)
  const before = await q.getLiveLocation(tx, studioId, id, 'update');
  if (!before) throw locationNotFound(id);
  const timezone = body.timezone === undefined ? undefined : timeZone(body.timezone);
  const patch = changedFields(before, { ...body, timezone });
  if (!Object.keys(patch).length) return unchanged(before);
  const location = (await q.updateLocation(tx, studioId, id, patch))!;
  return { record: location, events: updated('location.updated', before, location) };
}

/** 409 `venue_in_use` while live occurrences are still to come there: deleting it would leave them nowhere. */
async function refuseIfInUse(
  tx: Tx,
  studioId: string,
  where: { locationId: string } | { roomId: string },
  what: 'location' | 'room',
): Promise<void> {
  const { count, next } = await q.upcomingAt(tx, studioId, where);
  if (!next) return;
  throw new AppError('venue_in_use', {
    detail: `${count === 1 ? '1 upcoming occurrence is' : `${count} upcoming occurrences are`} held in this ${what} (the next: ${next.id} at ${iso(next.startsAt)}); cancel their classes, or wait until they have taken place, then delete it.`,
  });
}

/**
 * The studio's last live venue stays: with every live location locked, two racing deletes cannot both win.
 * A deleted location is 404 afterwards, so only the first delete records its events: the location's and each room's.
 */
export async function deleteLocation(
  tx: Tx,
  studioId: string,
  id: string,
): Promise<Written<Location, 'location.deleted' | 'room.deleted'>> {
  const live = await q.lockLiveLocationIds(tx, studioId);
  if (!live.includes(id)) throw locationNotFound(id);
  if (live.length === 1)
    throw new AppError('last_venue', {
      detail: "This is the studio's last live location; add another before deleting it.",
    });
  await refuseIfInUse(tx, studioId, { locationId: id }, 'location');
  const { location, rooms } = await q.markLocationDeleted(tx, studioId, id);
  return {
    record: location,
    events: [event('location.deleted', location), ...rooms.map((r) => event('room.deleted', r))],
  };
}

export async function createRoom(
  tx: Tx,
  studioId: string,
  locationId: string,
  body: CreateRoomBody,
): Promise<Written<Room, 'room.created'>> {
  if (!(await q.getLiveLocation(tx, studioId, locationId, 'share'))) throw locationNotFound(locationId);
  const room = await q.insertRoom(tx, studioId, locationId, { name: body.name, capacity: body.capacity ?? null });
  return { record: room, events: [event('room.created', room)] };
}

export async function updateRoom(
  tx: Tx,
  studioId: string,
  locationId: string,
  id: string,
  body: UpdateRoomBody,
): Promise<Written<Room, 'room.updated'>> {
  const before = await q.lockLiveRoom(tx, studioId, locationId, id);
  if (!before) throw roomNotFound(id);
  const patch = changedFields(before, body);
  if (!Object.keys(patch).length) return unchanged(before);
  const room = (await q.updateRoom(tx, studioId, locationId, id, patch))!;
  return { record: room, events: updated('room.updated', before, room) };
}

export async function deleteRoom(
  tx: Tx,
  studioId: string,
  locationId: string,
  id: string,
): Promise<Written<Room, 'room.deleted'>> {
  if (!(await q.lockLiveRoom(tx, studioId, locationId, id))) throw roomNotFound(id);
  await refuseIfInUse(tx, studioId, { roomId: id }, 'room');
  const room = await q.markRoomDeleted(tx, studioId, locationId, id);
  if (!room) throw roomNotFound(id);
  return { record: room, events: [event('room.deleted', room)] };
}
