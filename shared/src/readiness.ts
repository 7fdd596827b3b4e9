import { pingSql, type Sql } from './db';
import { jsonResponse } from './http';
import { pingRedis, type Redis } from './redis';

/** Contract §1, the same on every process: ready while Postgres answers; Redis down is degraded but serving. */
export interface Readiness {
  status: 'ready' | 'unavailable';
  checks: { postgres: 'up' | 'down'; redis: 'up' | 'down' };
}

/** A probe that does not answer within a second counts as down: a load balancer must not wait on a connect timeout. */
const within = (probe: Promise<boolean>, ms = 1000) =>
  Promise.race([probe, new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref?.())]);

/** `draining`: the process is stopping (SIGTERM), so it is never ready, whatever the checks say. */
export async function readiness(sql: Sql, redis: Redis | null, draining = false): Promise<Response> {
  const [postgres, redisUp] = await Promise.all([within(pingSql(sql)), redis ? within(pingRedis(redis)) : false]);
  const ready = postgres && !draining;
  const body: Readiness = { status: ready ? 'ready' : 'unavailable', checks: { postgres: postgres ? 'up' : 'down', redis: redisUp ? 'up' : 'down' } };
  return jsonResponse(body, { status: ready ? 200 : 503, headers: { 'cache-control': 'no-store' } });
}
