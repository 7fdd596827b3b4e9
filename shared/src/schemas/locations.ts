import { type Static, Type as t } from '@sinclair/typebox';
import { IdOut, Nullable, Page, Text, Timestamp } from './fields';

const line = Nullable(Text(200));
export const Address = t.Object(
  {
    line1: t.Optional(line),
    line2: t.Optional(line),
    city: t.Optional(line),
    region: t.Optional(line),
    postalCode: t.Optional(Nullable(Text(32))),
    country: t.Optional(Nullable(Text(100))),
  },
  { additionalProperties: false },
);
export type Address = Static<typeof Address>;

export const Location = t.Object({
  id: IdOut('loc_…'),
  name: t.String({ maxLength: 200 }),
  timezone: t.String({ maxLength: 64, description: 'IANA time zone' }),
  address: Nullable(Address),
  status: t.Union([t.Literal('live'), t.Literal('deleted')]),
  deletedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Location = Static<typeof Location>;
export const LocationPage = Page(Location);

const name = Text(200, { minLength: 1 });
const timezone = Text(64, { minLength: 1, description: "IANA time zone, e.g. Europe/Berlin; default the studio's" });

export const CreateLocationBody = t.Object(
  {
    name,
    timezone: t.Optional(timezone),
    address: t.Optional(Nullable(Address)),
  },
  { additionalProperties: false },
);
export type CreateLocationBody = Static<typeof CreateLocationBody>;

export const UpdateLocationBody = t.Object(
  {
    name: t.Optional(name),
    timezone: t.Optional(timezone),
    address: t.Optional(Nullable(Address)),
  },
  { additionalProperties: false },
);
export type UpdateLocationBody = Static<typeof UpdateLocationBody>;

export const Room = t.Object({
  id: IdOut('room_…'),
  locationId: IdOut(),
  name: t.String({ maxLength: 200 }),
  capacity: Nullable(t.Integer()),
  status: t.Union([t.Literal('live'), t.Literal('deleted')]),
  deletedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Room = Static<typeof Room>;
export const RoomPage = Page(Room);

const capacity = Nullable(t.Integer({ minimum: 1, maximum: 10000 }));
export const CreateRoomBody = t.Object({ name, capacity: t.Optional(capacity) }, { additionalProperties: false });
export type CreateRoomBody = Static<typeof CreateRoomBody>;
export const UpdateRoomBody = t.Object(
  { name: t.Optional(name), capacity: t.Optional(capacity) },
  { additionalProperties: false },
);
export type UpdateRoomBody = Static<typeof UpdateRoomBody>;
