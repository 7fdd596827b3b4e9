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

/** How long one probe of Postgres and Redis answers every `/readyz`: a load balancer asks every few seconds. */
const PROBE_FRESH_MS = 1000;

/** Whether the process serves: `draining`, it is stopping (SIGTERM); `paused`, a single-node gateway retaking its lock. */
export interface ServingState {
  draining?: boolean;
  paused?: boolean;
}

/** A process's `/readyz` answer. */
export type ReadinessCheck = () => Promise<Response>;

/**
 * `/readyz` for one process (docs/design/processes.md). Postgres and Redis are probed at most once a second, one probe
 * shared by every caller meanwhile: the gateway's public ports answer it to anyone, and a flood of it must not queue a
 * round trip each on the pool the key lookups use. The state is read on every answer: a draining or paused process is
 * never ready, whatever the last probe found.
 */
export function readinessCheck(sql: Sql, redis: RedisCheck, state: ServingState = {}): ReadinessCheck {
  let probe: Promise<[boolean, boolean]> | null = null;
  let probedAt = 0;
  return async () => {
    const now = performance.now();
    if (!probe || now - probedAt >= PROBE_FRESH_MS) {
      probedAt = now;
      probe = Promise.all([within(pingSql(sql)), redis && redis !== 'none' ? within(pingRedis(redis)) : false]);
    }
    const [postgres, redisUp] = await probe;
    return readinessAnswer(postgres, redisUp, redis, !!(state.draining || state.paused));
  };
}

function readinessAnswer(postgres: boolean, redisUp: boolean, redis: RedisCheck, draining: boolean): Response {
  const ready = postgres && !draining;
  const redisState = redis === 'none' ? 'none' : redisUp ? 'up' : 'down';
  const body: Readiness = {
    status: ready ? 'ready' : 'unavailable',
    checks: { postgres: postgres ? 'up' : 'down', redis: redisState },
  };
  return jsonResponse(body, { status: ready ? 200 : 503, headers: { 'cache-control': 'no-store' } });
}
