import { AppError, problems, quote } from '@studio/shared';
import type { Tx } from '@studio/shared/db';
import type { UpdateContentBody } from '@studio/shared/schemas/content';
import * as q from './queries';

const notFound = (id: string) => problems.notFound('video', id);

/** 404 before 422: the video must exist before its new instructor is judged. */
export async function updateVideo(tx: Tx, studioId: string, id: string, body: UpdateContentBody) {
  if (!(await q.lockVideo(tx, studioId, id))) throw notFound(id);
  if (body.instructorId != null && !(await q.isLiveInstructor(tx, studioId, body.instructorId))) {
    throw new AppError('unknown_instructor', { detail: `${quote(body.instructorId)} is not an active instructor of this studio.` });
  }
  const video = await q.updateVideo(tx, studioId, id, body);
  if (!video) throw notFound(id);
  return video;
}

export async function deleteVideo(tx: Tx, studioId: string, id: string) {
  const video = await q.markVideoDeleted(tx, studioId, id);
  if (!video) throw notFound(id);
  return video;
}
