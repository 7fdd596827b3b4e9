import type { Config } from '@studio/shared';
import type { Sql } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';
import type { ActivityWriter } from '../activity/writer';

export interface DashboardDeps {
  config: Config;
  sql: Sql;
  redis: Redis | null;
  activity: ActivityWriter;
}

/** Developer settings pages (issue 5). Until they land, the port answers with a plain notice. */
export function createDashboard(_deps: DashboardDeps) {
  return (_req: Request): Response | Promise<Response> =>
    new Response('The Developer settings dashboard is not built yet.', { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}
