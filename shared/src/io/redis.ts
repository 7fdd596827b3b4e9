import { createClient, createCluster } from 'redis';
import { type Config, redisMode } from '../config';
import { log } from '../http';

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
