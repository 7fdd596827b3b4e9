import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getLiveLocation, getLiveRoom, listLocationsPage, listRoomsPage } from './queries';
import * as svc from './service';

type Ids =
  | 'managementListLocations'
  | 'managementCreateLocation'
  | 'managementGetLocation'
  | 'managementUpdateLocation'
  | 'managementDeleteLocation'
  | 'managementListRooms'
  | 'managementCreateRoom'
  | 'managementGetRoom'
  | 'managementUpdateRoom'
  | 'managementDeleteRoom';

/** Locations and their rooms (docs/design/resources.md). Deleted ones are 404 and leave the lists. */
export const locationHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  const cursorSecret = deps.config.CURSOR_SECRET;
  return {
    managementListLocations: ({ caller, query }) =>
      listLocationsPage(deps.sql, caller.studioId, readPage(cursorSecret, caller, 'locations', query)),
    managementCreateLocation: (c) => write(c, (tx) => svc.createLocation(tx, c.caller.studioId, c.body)),
    managementGetLocation: async ({ caller, params }) =>
      found(await getLiveLocation(deps.sql, caller.studioId, params.locationId), 'location'),
    managementUpdateLocation: (c) =>
      write(c, (tx) => svc.updateLocation(tx, c.caller.studioId, c.params.locationId, c.body)),
    managementDeleteLocation: (c) => write(c, (tx) => svc.deleteLocation(tx, c.caller.studioId, c.params.locationId)),

    managementListRooms: async ({ caller, query, params: { locationId } }) => {
      found(await getLiveLocation(deps.sql, caller.studioId, locationId), 'location');
      // the location is a filter of the cursor, so one location's cursor is refused on another's rooms
      return listRoomsPage(
        deps.sql,
        caller.studioId,
        readPage(cursorSecret, caller, 'rooms', query, { locationId }),
        locationId,
      );
    },
    managementCreateRoom: (c) => write(c, (tx) => svc.createRoom(tx, c.caller.studioId, c.params.locationId, c.body)),
    managementGetRoom: async ({ caller, params }) =>
      found(await getLiveRoom(deps.sql, caller.studioId, params.locationId, params.roomId), 'room'),
    managementUpdateRoom: (c) =>
      write(c, (tx) => svc.updateRoom(tx, c.caller.studioId, c.params.locationId, c.params.roomId, c.body)),
    managementDeleteRoom: (c) =>
      write(c, (tx) => svc.deleteRoom(tx, c.caller.studioId, c.params.locationId, c.params.roomId)),
  } satisfies HandlersFor<Ids>;
};
