import { AppError, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/db';
import { canonicalTimeZone } from '@studio/shared/schemas/fields';
import type { CreateLocationBody, CreateRoomBody, UpdateLocationBody, UpdateRoomBody } from '@studio/shared/schemas/locations';
import * as q from './queries';

const locationNotFound = (id: string) => problems.notFound('location', id);
const roomNotFound = (id: string) => new AppError('not_found', { detail: `No room ${quote(id)} in this location.` }); // not the studio-wide wording

function timeZone(tz: string): string {
  const canonical = canonicalTimeZone(tz);
  if (!canonical) {
    throw problems.invalidFields([{ path: '/body/timezone', message: 'must be an IANA time zone, e.g. Europe/Berlin' }]);
  }
  return canonical;
}

export async function createLocation(tx: Tx, studioId: string, body: CreateLocationBody) {
  const timezone = body.timezone === undefined ? await q.studioTimezone(tx, studioId) : timeZone(body.timezone);
  return q.insertLocation(tx, studioId, { name: body.name, timezone, address: body.address ?? null });
}

export async function updateLocation(tx: Tx, studioId: string, id: string, body: UpdateLocationBody) {
  const patch = { ...body, timezone: body.timezone === undefined ? undefined : timeZone(body.timezone) };
  const location = await q.updateLocation(tx, studioId, id, patch);
  if (!location) throw locationNotFound(id);
  return location;
}

/** The studio's last live venue stays: with every live location locked, two racing deletes cannot both win. */
export async function deleteLocation(tx: Tx, studioId: string, id: string) {
  const live = await q.lockLiveLocationIds(tx, studioId);
  if (!live.includes(id)) throw locationNotFound(id);
  if (live.length === 1) throw new AppError('last_venue', { detail: 'This is the studio\'s last live location; add another before deleting it.' });
  return q.markLocationDeleted(tx, studioId, id);
}

export async function createRoom(tx: Tx, studioId: string, locationId: string, body: CreateRoomBody) {
  if (!(await q.getLiveLocation(tx, studioId, locationId, true))) throw locationNotFound(locationId);
  return q.insertRoom(tx, studioId, locationId, { name: body.name, capacity: body.capacity ?? null });
}

export async function updateRoom(tx: Tx, studioId: string, locationId: string, id: string, body: UpdateRoomBody) {
  const room = await q.updateRoom(tx, studioId, locationId, id, body);
  if (!room) throw roomNotFound(id);
  return room;
}

export async function deleteRoom(tx: Tx, studioId: string, locationId: string, id: string) {
  const room = await q.markRoomDeleted(tx, studioId, locationId, id);
  if (!room) throw roomNotFound(id);
  return room;
}
