import { AppError, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/io';
import type { UpdateContentBody, Video } from '@studio/shared/schemas';
import { changedFields, event, unchanged, updated, type Written } from '../kit/events';
import * as q from './queries';

const notFound = (id: string) => problems.notFound('video', id);

/** 404 before 422: the video must exist before its new instructor is judged. Only what differs is written. */
export async function updateVideo(
  tx: Tx,
  studioId: string,
  id: string,
  body: UpdateContentBody,
): Promise<Written<Video, 'content.updated'>> {
  const before = await q.lockVideo(tx, studioId, id);
  if (!before) throw notFound(id);
  if (body.instructorId != null && !(await q.isLiveInstructor(tx, studioId, body.instructorId))) {
    throw new AppError('unknown_instructor', {
      detail: `${quote(body.instructorId)} is not an active instructor of this studio.`,
    });
  }
  const patch = changedFields(before, body);
  if (!Object.keys(patch).length) return unchanged(before);
  const video = await q.updateVideo(tx, studioId, id, patch);
  if (!video) throw notFound(id);
  return { record: video, events: updated('content.updated', before, video) };
}

/** A deleted video is 404 afterwards, so a second delete is refused and records nothing. */
export async function deleteVideo(tx: Tx, studioId: string, id: string): Promise<Written<Video, 'content.deleted'>> {
  const video = await q.markVideoDeleted(tx, studioId, id);
  if (!video) throw notFound(id);
  return { record: video, events: [event('content.deleted', video)] };
}
