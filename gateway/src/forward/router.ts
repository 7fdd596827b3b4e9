import { operationsOf, type Operation, type Surface } from '@studio/shared';

export type RouteMatch = { op: Operation } | { allow: string[] } | null;

interface Route {
  re: RegExp | null;
  path: string;
  byMethod: Map<string, Operation>;
}

/** Routes of one surface, compiled once from the operations table. */
export function compileRouter(surface: Surface) {
  const routes = new Map<string, Route>();
  for (const op of operationsOf(surface)) {
    let r = routes.get(op.path);
    if (!r) {
      const dynamic = op.path.includes('{');
      r = { path: op.path, byMethod: new Map(), re: dynamic ? new RegExp('^' + op.path.replace(/\{\w+\}/g, '[^/]+') + '$') : null };
      routes.set(op.path, r);
    }
    r.byMethod.set(op.method, op);
  }
  const statics = new Map([...routes.values()].filter((r) => !r.re).map((r) => [r.path, r]));
  const dynamics = [...routes.values()].filter((r) => r.re);

  return function match(method: string, path: string): RouteMatch {
    const r = statics.get(path) ?? dynamics.find((d) => d.re!.test(path));
    if (!r) return null;
    const op = r.byMethod.get(method);
    return op ? { op } : { allow: [...r.byMethod.keys()] };
  };
}
