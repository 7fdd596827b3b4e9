import type { HandlersFor } from '@studio/shared/register';
import type { ManagementDeps } from '../app';
import { created, found, ok, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getLiveLocation, getLiveRoom, listLocationsPage, listRoomsPage } from './queries';
import * as svc from './service';

type Ids =
  | 'managementListLocations' | 'managementCreateLocation' | 'managementGetLocation' | 'managementUpdateLocation' | 'managementDeleteLocation'
  | 'managementListRooms' | 'managementCreateRoom' | 'managementGetRoom' | 'managementUpdateRoom' | 'managementDeleteRoom';

/** Locations and their rooms (contract §8). Deleted ones are 404 and leave the lists. */
export const locationHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  const cursorSecret = deps.config.CURSOR_SECRET;
  return {
    managementListLocations: ({ caller, query }) => listLocationsPage(deps.sql, caller.studioId, readPage(cursorSecret, caller, 'locations', query)),
    managementCreateLocation: (c) => write(c, async (tx) => {
      const location = await svc.createLocation(tx, c.caller.studioId, c.body);
      return created(location, `/v1/locations/${location.id}`);
    }),
    managementGetLocation: async ({ caller, params }) => found(await getLiveLocation(deps.sql, caller.studioId, params.locationId), 'location'),
    managementUpdateLocation: (c) => write(c, async (tx) => ok(await svc.updateLocation(tx, c.caller.studioId, c.params.locationId, c.body))),
    managementDeleteLocation: (c) => write(c, async (tx) => ok(await svc.deleteLocation(tx, c.caller.studioId, c.params.locationId))),

    managementListRooms: async ({ caller, query, params: { locationId } }) => {
      found(await getLiveLocation(deps.sql, caller.studioId, locationId), 'location');
      // the location is a filter of the cursor, so one location's cursor is refused on another's rooms
      return listRoomsPage(deps.sql, caller.studioId, readPage(cursorSecret, caller, 'rooms', query, { locationId }), locationId);
    },
    managementCreateRoom: (c) => write(c, async (tx) => {
      const room = await svc.createRoom(tx, c.caller.studioId, c.params.locationId, c.body);
      return created(room, `/v1/locations/${c.params.locationId}/rooms/${room.id}`);
    }),
    managementGetRoom: async ({ caller, params }) => found(await getLiveRoom(deps.sql, caller.studioId, params.locationId, params.roomId), 'room'),
    managementUpdateRoom: (c) => write(c, async (tx) => ok(await svc.updateRoom(tx, c.caller.studioId, c.params.locationId, c.params.roomId, c.body))),
    managementDeleteRoom: (c) => write(c, async (tx) => ok(await svc.deleteRoom(tx, c.caller.studioId, c.params.locationId, c.params.roomId))),
  } satisfies HandlersFor<Ids>;
};
