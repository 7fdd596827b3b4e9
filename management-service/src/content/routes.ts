import type { HandlersFor } from '@studio/shared/io';
import type { ManagementDeps } from '../kit/deps';
import { found, writerOf } from '../kit/handlers';
import { readPage } from '../kit/pagination';
import { getContent, listContentPage } from './queries';
import * as svc from './service';

type Ids = 'managementListContent' | 'managementGetContent' | 'managementUpdateContent' | 'managementDeleteContent';

/** Content (videos): list, read, update, delete. No create: videos are uploaded elsewhere. */
export const contentHandlers = (deps: ManagementDeps) => {
  const write = writerOf(deps);
  return {
    managementListContent: ({ caller, query }) =>
      listContentPage(deps.sql, caller.studioId, readPage(deps.config.CURSOR_SECRET, caller, 'content', query)),
    managementGetContent: async ({ caller, params }) =>
      found(await getContent(deps.sql, caller.studioId, params.contentId), 'content'),
    managementUpdateContent: (c) =>
      write(c, (tx) => svc.updateVideo(tx, c.caller.studioId, c.params.contentId, c.body)),
    managementDeleteContent: (c) => write(c, (tx) => svc.deleteVideo(tx, c.caller.studioId, c.params.contentId)),
  } satisfies HandlersFor<Ids>;
};
