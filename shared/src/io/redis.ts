import { createClient, createCluster } from 'redis';
import { type Config, redisMode } from '../config';
import { log } from '../http';
import { withDeadline } from '../time';

/**
 * A client that never queues commands while disconnected (they fail at once, so
 * callers fall back to Postgres instead of hanging) and keeps reconnecting.
 */
const clientOptions = (url?: string) => ({
  ...(url ? { url } : {}),
  disableOfflineQueue: true,
  socket: { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000) },
});

function build(url: string) {
  return createClient(clientOptions(url));
}
/**
 * The commands every process uses, the same on a single server and on a Redis Cluster
 * (docs/design/scale-out.md). On a cluster, every multi-key script and MULTI keeps its keys in one
 * hash slot (`{…}` tags in the key names), scripts go by EVAL (each node caches them), and
 * `subscribers` counts a channel's subscribers on every node.
 */
export type Redis = ReturnType<typeof build>;

const clusters = new WeakSet<object>();
export const isCluster = (redis: Redis): boolean => clusters.has(redis);

/** `REDIS_CLUSTER_NODES` (comma-separated `redis://host:port` seeds) makes a cluster client; else one server. */
export function createRedis(url: string, name = 'redis', clusterNodes = ''): Redis {
  const seeds = clusterNodes
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  let client: Redis;
  if (seeds.length) {
    const cluster = createCluster({ rootNodes: seeds.map((u) => ({ url: u })), defaults: clientOptions() });
    clusters.add(cluster);
    // the cluster client has every command we use, with the same replies; `duplicate` keeps it a cluster
    const duplicate = cluster.duplicate.bind(cluster);
    Object.assign(cluster, {
      duplicate: () => {
        const d = duplicate();
        clusters.add(d);
        return d;
      },
    });
    client = cluster as unknown as Redis;
  } else client = build(url);
  let lastLog = 0;
  client.on('error', (err: Error) => {
    const now = Date.now();
    if (now - lastLog > 10_000) {
      lastLog = now;
      log('warn', `${name} error`, { error: err.message }); // LOG_LEVEL honoured, with the time and the process
    }
  });
  return client;
}

type ClusterLike = { masters: unknown[]; nodeClient(node: unknown): Promise<Redis> };

/** The clients of every master (a cluster), or the client itself (one server). */
async function nodesOf(redis: Redis): Promise<Redis[]> {
  if (!isCluster(redis)) return [redis];
  const cluster = redis as unknown as ClusterLike;
  return Promise.all(cluster.masters.map((m) => cluster.nodeClient(m)));
}

/** How many connections subscribe to `channel`, on every node (PUBLISH's own count is one node's on a cluster). */
export async function subscribers(redis: Redis, channel: string, published: number): Promise<number> {
  if (!isCluster(redis)) return published;
  let total = 0;
  for (const node of await nodesOf(redis)) total += Number(Object.values(await node.pubSubNumSub(channel))[0] ?? 0);
  return total;
}

/** Deletes every key that starts with `prefix`, on every node (tests and benches clean up with it). */
export async function deleteByPrefix(redis: Redis, prefix: string): Promise<void> {
  for (const node of await nodesOf(redis)) {
    for await (const keys of node.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      for (const key of keys) await redis.del(key); // one key at a time: a cluster refuses a DEL across slots
    }
  }
}

/**
 * How long a caller waits for Redis's reply. node-redis bounds a command only until it is written (its `timeout`);
 * once sent, it waits for the reply for as long as the connection stays up. A Redis that stops answering with its
 * connection up (paused, overloaded, a network dropping packets) would hold every call that asks it.
 */
export const REDIS_REPLY_MS = 1_000;
/** After a reply did not come in time, the client is taken as away this long; then one call asks again. */
const STALLED_MS = 2_000;
const stalledUntil = new WeakMap<object, number>();

/** Redis did not reply within REDIS_REPLY_MS. */
export class RedisStalledError extends Error {
  constructor() {
    super(`Redis did not reply within ${REDIS_REPLY_MS} ms`);
  }
}

/**
 * Whether to ask this Redis at all: connected, and not found stalled within the last STALLED_MS. Every caller that
 * falls back when Redis is down (limits fail open, key lookups go to Postgres, a write keeps its advisory lock alone)
 * tests this first, so a stalled Redis costs one wait, not one per call.
 */
export function redisUsable(redis: Redis | null | undefined): redis is Redis {
  if (!redis?.isReady) return false;
  const until = stalledUntil.get(redis);
  return until === undefined || Date.now() >= until;
}

/** A command's reply, or RedisStalledError once REDIS_REPLY_MS have passed (and the client is marked stalled). */
export function bounded<T>(redis: Redis, reply: Promise<T>): Promise<T> {
  return withDeadline(reply, REDIS_REPLY_MS, () => {
    stalledUntil.set(redis, Date.now() + STALLED_MS);
    return new RedisStalledError();
  });
}

/** Connect without letting an unreachable Redis stop the process from starting. */
export async function connectRedis(client: Redis): Promise<void> {
  await Promise.race([client.connect().catch(() => {}), Bun.sleep(2_000)]);
}

/**
 * A process's Redis as configured (docs/design/scale-out.md, single-node.md), connected as `connectRedis` does; null in
 * single-node mode (`REDIS_URL=none`), where nothing is ever asked of Redis. In Redis mode the
 * client is returned even while that Redis is down: it keeps reconnecting (a degraded state, docs/design/gateway.md).
 */
export async function connectConfiguredRedis(
  config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>,
  name: string,
): Promise<Redis | null> {
  if (redisMode(config) === 'single-node') return null;
  const client = createRedis(config.REDIS_URL, name, config.REDIS_CLUSTER_NODES);
  await connectRedis(client);
  return client;
}

export async function pingRedis(client: Redis): Promise<boolean> {
  try {
    if (!client.isReady) return false;
    return (await Promise.all((await nodesOf(client)).map((n) => n.ping()))).every((r) => r === 'PONG');
  } catch {
    return false;
  }
}

/** Close gracefully when connected; a client still retrying an unreachable server is just destroyed. */
export async function quitRedis(client: Redis | null): Promise<void> {
  if (!client?.isOpen) return;
  if (!client.isReady) return client.destroy();
  try {
    await Promise.race([client.close(), Bun.sleep(1_000).then(() => client.destroy())]);
  } catch {
    client.destroy();
  }
}
