import { Elysia, t } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { UpdateContentBody, Video, VideoPage } from '@studio/shared/schemas/content';
import type { ManagementDeps } from '../app';
import { mgRoute, pathOf } from '../kit/openapi';
import { listPage } from '../kit/pagination';
import { runWrite } from '../kit/write';
import { listVideos } from './queries';
import * as svc from './service';

const params = t.Object({ contentId: t.String({ maxLength: 64 }) });

/** Content (videos): list, update, delete. No create: videos are uploaded elsewhere. */
export const contentRoutes = (deps: ManagementDeps) =>
  new Elysia({ name: 'management-content' })
    .use(withCaller)
    .get(pathOf('managementListContent'), async ({ caller }) => listPage(await listVideos(deps.sql, caller.studioId)),
      mgRoute('managementListContent', 'List videos', { 200: VideoPage }, {}, 'Videos that are not deleted, ordered by createdAt, then id.'))
    .patch(pathOf('managementUpdateContent'), ({ caller, request, body, params: { contentId } }) =>
      runWrite(deps, caller, request, body, async (tx) => ({ status: 200, body: await svc.updateVideo(tx, caller.studioId, contentId, body) })), {
      params,
      body: UpdateContentBody,
      ...mgRoute('managementUpdateContent', 'Update a video', { 200: Video }, { 404: ['not_found'], 422: ['unknown_instructor'] },
        'Accepts `title`, `description`, `visibility` and `instructorId` (an active instructor of the studio, or null).'),
    })
    .delete(pathOf('managementDeleteContent'), ({ caller, request, params: { contentId } }) =>
      runWrite(deps, caller, request, undefined, async (tx) => ({ status: 200, body: await svc.deleteVideo(tx, caller.studioId, contentId) })), {
      params,
      ...mgRoute('managementDeleteContent', 'Delete a video', { 200: Video }, { 404: ['not_found'] }, 'The answer is the video in its final state (`deletedAt` set); it is 404 afterwards.'),
    });
