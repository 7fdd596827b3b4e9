import { type Config, redisMode } from '../config';
import { jsonResponse } from '../http';
import { pingSql, type Sql } from './db';
import { pingRedis, type Redis } from './redis';

/** docs/design/processes.md, the same on every process: ready while Postgres answers; Redis down is degraded but serving; `none` is single-node mode (docs/design/single-node.md). */
export interface Readiness {
  status: 'ready' | 'unavailable';
  checks: { postgres: 'up' | 'down'; redis: 'up' | 'down' | 'none' };
}

/** What readiness checks of Redis: a client (null: none was made, so it counts as down), or `none` in single-node mode. */
export type RedisCheck = Redis | null | 'none';
/** The check of a process's Redis: `none` in single-node mode, where no client exists and none is missed. */
export const redisCheckOf = (
  config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>,
  redis: Redis | null,
): RedisCheck => (redisMode(config) === 'single-node' ? 'none' : redis);

/** A probe that does not answer within a second counts as down: a load balancer must not wait on a connect timeout. */
const within = (probe: Promise<boolean>, ms = 1000) =>
  Promise.race([probe, new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref?.())]);

/** `draining`: the process is stopping (SIGTERM), so it is never ready, whatever the checks say. */
export async function readiness(sql: Sql, redis: RedisCheck, draining = false): Promise<Response> {
  const [postgres, redisUp] = await Promise.all([
    within(pingSql(sql)),
    redis && redis !== 'none' ? within(pingRedis(redis)) : false,
  ]);
  const ready = postgres && !draining;
  const redisState = redis === 'none' ? 'none' : redisUp ? 'up' : 'down';
  const body: Readiness = {
    status: ready ? 'ready' : 'unavailable',
    checks: { postgres: postgres ? 'up' : 'down', redis: redisState },
  };
  return jsonResponse(body, { status: ready ? 200 : 503, headers: { 'cache-control': 'no-store' } });
}
