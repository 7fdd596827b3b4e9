import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import {
  CreateLocationBody, CreateRoomBody, Location, LocationPage, Room, RoomPage, UpdateLocationBody, UpdateRoomBody,
} from '@studio/shared/schemas/locations';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { listPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listLocations } from './queries';
import * as svc from './service';

const locationParams = t.Object({ locationId: t.String({ maxLength: 64 }) });
const roomParams = t.Object({ locationId: t.String({ maxLength: 64 }), roomId: t.String({ maxLength: 64 }) });

/** Locations and their rooms (contract §8). Deleted ones are 404 and leave the lists. */
export const locationRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-locations' })
    .use(withCaller)
    .get(pathOf('managementListLocations'), async ({ caller }) => listPage(await listLocations(deps.sql, caller.studioId)),
      mgRoute('managementListLocations', 'List locations', { 200: LocationPage }, {}, 'Live locations, ordered by createdAt, then id.'))
    .post(pathOf('managementCreateLocation'), ({ caller, request, body }) =>
      runWrite(deps, caller, request, body, async (tx) => {
        const location = await svc.createLocation(tx, caller.studioId, body);
        return { status: 201, body: location, location: `/v1/locations/${location.id}` };
      }), {
      body: CreateLocationBody,
      ...mgRoute('managementCreateLocation', 'Create a location', { 201: Location }, {}, '`timezone` is an IANA name (default: the studio\'s).'),
    })
    .patch(pathOf('managementUpdateLocation'), ({ caller, request, body, params: { locationId } }) =>
      runWrite(deps, caller, request, body, async (tx) => ({ status: 200, body: await svc.updateLocation(tx, caller.studioId, locationId, body) })), {
      params: locationParams,
      body: UpdateLocationBody,
      ...mgRoute('managementUpdateLocation', 'Update a location', { 200: Location }, { 404: ['not_found'] }),
    })
    .delete(pathOf('managementDeleteLocation'), ({ caller, request, params: { locationId } }) =>
      runWrite(deps, caller, request, undefined, async (tx) => ({ status: 200, body: await svc.deleteLocation(tx, caller.studioId, locationId) })), {
      params: locationParams,
      ...mgRoute('managementDeleteLocation', 'Delete a location', { 200: Location }, { 404: ['not_found'], 409: ['last_venue'] },
        'The location and its rooms become `deleted` (404 afterwards); the answer is the location in its final state. The studio\'s last live location cannot be deleted (409 `last_venue`).'),
    })
    .get(pathOf('managementListRooms'), async ({ caller, params: { locationId } }) => listPage(await svc.listRooms(deps.sql, caller.studioId, locationId)), {
      params: locationParams,
      ...mgRoute('managementListRooms', 'List the rooms of a location', { 200: RoomPage }, { 404: ['not_found'] }, 'Live rooms, ordered by createdAt, then id.'),
    })
    .post(pathOf('managementCreateRoom'), ({ caller, request, body, params: { locationId } }) =>
      runWrite(deps, caller, request, body, async (tx) => {
        const room = await svc.createRoom(tx, caller.studioId, locationId, body);
        return { status: 201, body: room, location: `/v1/locations/${locationId}/rooms/${room.id}` };
      }), {
      params: locationParams,
      body: CreateRoomBody,
      ...mgRoute('managementCreateRoom', 'Create a room', { 201: Room }, { 404: ['not_found'] }),
    })
    .patch(pathOf('managementUpdateRoom'), ({ caller, request, body, params: { locationId, roomId } }) =>
      runWrite(deps, caller, request, body, async (tx) => ({ status: 200, body: await svc.updateRoom(tx, caller.studioId, locationId, roomId, body) })), {
      params: roomParams,
      body: UpdateRoomBody,
      ...mgRoute('managementUpdateRoom', 'Update a room', { 200: Room }, { 404: ['not_found'] }),
    })
    .delete(pathOf('managementDeleteRoom'), ({ caller, request, params: { locationId, roomId } }) =>
      runWrite(deps, caller, request, undefined, async (tx) => ({ status: 200, body: await svc.deleteRoom(tx, caller.studioId, locationId, roomId) })), {
      params: roomParams,
      ...mgRoute('managementDeleteRoom', 'Delete a room', { 200: Room }, { 404: ['not_found'] }, 'The room becomes `deleted` (404 afterwards); the answer is the room in its final state.'),
    });
