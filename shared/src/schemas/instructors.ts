import { type Static, Type as t } from '@sinclair/typebox';
import { Email, HttpUrl, IdOut, MAX_URL_LENGTH, Nullable, Page, Text, Timestamp } from './fields';

export const Instructor = t.Object({
  id: IdOut('ins_…'),
  name: t.String({ maxLength: 120 }),
  email: Nullable(t.String({ maxLength: 254 })),
  bio: Nullable(t.String({ maxLength: 2000 })),
  photoUrl: Nullable(t.String({ maxLength: MAX_URL_LENGTH })),
  disciplines: t.Array(t.String({ maxLength: 60 }), { maxItems: 50 }),
  active: t.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Instructor = Static<typeof Instructor>;
export const InstructorPage = Page(Instructor);

const fields = {
  name: Text(120, { minLength: 1 }),
  email: Nullable(Email()),
  bio: Nullable(Text(2000)),
  photoUrl: Nullable(HttpUrl("The photo, an http:// or https:// URL (shown on the studio's public pages)")),
  disciplines: t.Array(Text(60, { minLength: 1 }), { maxItems: 50 }),
  active: t.Boolean({ description: 'Inactive instructors cannot be given new classes or videos. Default true.' }),
};

export const CreateInstructorBody = t.Object(
  {
    name: fields.name,
    email: t.Optional(fields.email),
    bio: t.Optional(fields.bio),
    photoUrl: t.Optional(fields.photoUrl),
    disciplines: t.Optional(fields.disciplines),
    active: t.Optional(fields.active),
  },
  { additionalProperties: false },
);
export type CreateInstructorBody = Static<typeof CreateInstructorBody>;

/** Any of the create fields; absent ones keep their value. */
export const UpdateInstructorBody = t.Partial(CreateInstructorBody);
export type UpdateInstructorBody = Static<typeof UpdateInstructorBody>;
