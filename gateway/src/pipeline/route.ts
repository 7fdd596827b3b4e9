import { type Operation, operationsOf, type Surface } from '@studio/shared';
import type { Ctx, RouteMatch } from './context';
import type { SurfaceProfile } from './profile';

interface Route {
  re: RegExp | null;
  path: string;
  byMethod: Map<string, Operation>;
}

/** Routes of one surface, compiled once from the operations table. */
function compileRouter(surface: Surface) {
  const routes = new Map<string, Route>();
  for (const op of operationsOf(surface)) {
    let r = routes.get(op.path);
    if (!r) {
      const dynamic = op.path.includes('{');
      r = {
        path: op.path,
        byMethod: new Map(),
        re: dynamic ? new RegExp(`^${op.path.replace(/\{\w+\}/g, '[^/]+')}$`) : null,
      };
      routes.set(op.path, r);
    }
    r.byMethod.set(op.method, op);
  }
  const statics = new Map([...routes.values()].filter((r) => !r.re).map((r) => [r.path, r]));
  const dynamics = [...routes.values()].filter((r) => r.re);

  return function match(method: string, path: string): RouteMatch {
    const r = statics.get(path) ?? dynamics.find((d) => d.re!.test(path));
    if (!r) return null;
    // HEAD is GET without the body (RFC 9110, section 9.3.2): the same operation, key, limit and record; Bun sends no body
    const op = r.byMethod.get(method) ?? (method === 'HEAD' ? r.byMethod.get('GET') : undefined);
    return op ? { op } : { allow: [...r.byMethod.keys()] };
  };
}

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
