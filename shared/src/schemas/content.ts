import { type Static, Type as t } from '@sinclair/typebox';
import { Id, IdOut, Nullable, Page, Text, Timestamp } from './fields';

const visibility = t.Union([t.Literal('public'), t.Literal('members_only'), t.Literal('private')]);

/** A video. There is no create operation: videos are uploaded elsewhere. */
export const Video = t.Object({
  id: IdOut('vid_…'),
  title: t.String({ maxLength: 200 }),
  description: Nullable(t.String({ maxLength: 5000 })),
  durationSeconds: Nullable(t.Integer()),
  instructorId: Nullable(IdOut()),
  visibility,
  status: t.Union([t.Literal('ready'), t.Literal('processing')]),
  deletedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Video = Static<typeof Video>;
export const VideoPage = Page(Video);

export const UpdateContentBody = t.Object(
  {
    title: t.Optional(Text(200, { minLength: 1 })),
    description: t.Optional(Nullable(Text(5000))),
    visibility: t.Optional(visibility),
    instructorId: t.Optional(
      Nullable(Id('A live instructor of the studio, else 422 unknown_instructor; null clears it')),
    ),
  },
  { additionalProperties: false },
);
export type UpdateContentBody = Static<typeof UpdateContentBody>;
