import { Type as t, type Static } from '@sinclair/typebox';
import { Nullable, Page, Timestamp } from './fields';

export const Instructor = t.Object({
  id: t.String({ description: 'ins_…' }),
  name: t.String(),
  email: Nullable(t.String()),
  bio: Nullable(t.String()),
  photoUrl: Nullable(t.String()),
  disciplines: t.Array(t.String()),
  active: t.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Instructor = Static<typeof Instructor>;
export const InstructorPage = Page(Instructor);

const fields = {
  name: t.String({ minLength: 1, maxLength: 120 }),
  email: Nullable(t.String({ format: 'email', maxLength: 254 })),
  bio: Nullable(t.String({ maxLength: 2000 })),
  photoUrl: Nullable(t.String({ format: 'uri', maxLength: 2048 })),
  disciplines: t.Array(t.String({ minLength: 1, maxLength: 60 }), { maxItems: 50 }),
  active: t.Boolean({ description: 'Inactive instructors cannot be given new classes or videos. Default true.' }),
};

export const CreateInstructorBody = t.Object({
  name: fields.name,
  email: t.Optional(fields.email),
  bio: t.Optional(fields.bio),
  photoUrl: t.Optional(fields.photoUrl),
  disciplines: t.Optional(fields.disciplines),
  active: t.Optional(fields.active),
}, { additionalProperties: false });
export type CreateInstructorBody = Static<typeof CreateInstructorBody>;

/** Any of the create fields; absent ones keep their value. */
export const UpdateInstructorBody = t.Partial(CreateInstructorBody);
export type UpdateInstructorBody = Static<typeof UpdateInstructorBody>;
