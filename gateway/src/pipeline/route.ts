import { compileRouter } from '../forward/router';
import type { Ctx } from './context';
import type { SurfaceProfile } from './profile';

/**
 * Step 2: the operation this method and path name in the operations table. A miss
 * is not refused here: the key is judged first, so a studio sees even its callers'
 * wrong paths in its activity log.
 */
export function routeStep(p: SurfaceProfile) {
  const match = compileRouter(p.surface);
  return function route(c: Ctx): void {
    c.route = match(c.method, c.path);
    c.op = c.route && 'op' in c.route ? c.route.op : null;
  };
}
