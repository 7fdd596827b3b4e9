import type { Channels } from '@studio/shared';
import { log } from '@studio/shared';
import { isCluster, type Redis } from '@studio/shared/io';
import type { StorefrontCache } from '../cache/storefront';
import type { KeyResolver } from '../keys/resolver';

export interface BroadcastDeps {
  /** A connection in subscriber mode; null: no Redis, so nothing in memory is ever trusted. */
  subscriber: Redis | null;
  /** Commands (revocation acks). */
  redis: Redis | null;
  channels: Channels;
  keys: KeyResolver;
  storefrontCache: StorefrontCache;
}

/**
 * Trust what this replica keeps in memory (key records, Storefront answers) from now on, or stop:
 * either way it starts from empty caches, since broadcasts may have been missed meanwhile. Redis
 * mode calls it as its subscription comes and goes; single-node mode as its lock session does.
 */
export function trustMemory(keys: KeyResolver, storefrontCache: StorefrontCache, live: boolean): void {
  keys.flush();
  keys.useLocal = live;
  storefrontCache.flush();
  storefrontCache.enabled = live;
}

/**
 * Revocations and Storefront changes announced by any process over Redis. What this replica
 * keeps in memory (key records, Storefront answers) is trusted only while the
 * subscription is live; every (re)connect starts from empty caches, since
 * broadcasts may have been missed while it was down. The client subscribes again by itself
 * after a reconnect; a subscription that never took (Redis down when the gateway started: the
 * queued SUBSCRIBE is refused) is made again on the next `ready`, and memory is trusted only once
 * both channels are subscribed.
 */
export async function subscribeBroadcasts({
  subscriber,
  redis,
  channels,
  keys,
  storefrontCache,
}: BroadcastDeps): Promise<() => void> {
  if (!subscriber) return () => {};
  const onRevoked = (message: string) => {
    const [nonce, hashes = ''] = message.split(' ');
    for (const hash of hashes.split(',')) keys.evict(hash);
    // confirm to the revoker, which waits for every replica before it returns
    if (nonce)
      redis
        ?.multi()
        .rPush(channels.ack(nonce), '1')
        .expire(channels.ack(nonce), 60)
        .exec()
        .catch(() => {});
  };
  // Storefront answers cached here are dropped the moment any writer announces a change
  const onStorefrontChanged = (studioId: string) => storefrontCache.drop(studioId);
  let subscribed = false;
  let subscribing: Promise<void> | null = null;
  /** Both channels (the same listeners each time: a second SUBSCRIBE adds none), then trust; one attempt at a time. */
  const listen = () =>
    (subscribing ??= (async () => {
      try {
        await subscriber.subscribe(channels.keysRevoked, onRevoked);
        await subscriber.subscribe(channels.storefrontChanged, onStorefrontChanged);
        subscribed = true;
        trustMemory(keys, storefrontCache, subscriber.isReady);
      } catch (err) {
        log('warn', 'revocation subscription unavailable; verifying keys against Postgres', { error: String(err) });
      } finally {
        subscribing = null;
      }
    })());
  if (isCluster(subscriber)) return clusterSubscription(subscriber, redis, channels, listen, keys, storefrontCache);
  const down = () => trustMemory(keys, storefrontCache, false);
  subscriber.on('error', down);
  subscriber.on('reconnecting', down);
  subscriber.on('end', down);
  subscriber.on('ready', () => (subscribed ? trustMemory(keys, storefrontCache, true) : void listen()));
  await listen();
  return () => {};
}

/** How often a gateway on a Redis Cluster sends itself a message through its subscription, and how late it may come. */
const PING_EVERY_MS = 1_000;
const PING_LATE_MS = 3_000;

/**
 * On a Redis Cluster the client tells no `ready` or `reconnecting` of the node its subscription lives on, only
 * `node-*` events of any of its nodes, and moves the subscription to another node by itself. So memory is trusted
 * only while this gateway's own message, published every second, comes back through the subscription: any node's
 * trouble (or a message 3 s late) distrusts it at once, and the next message that comes back, proof that the
 * subscription is live again, trusts it anew (from empty caches either way). Returns the stop.
 */
async function clusterSubscription(
  subscriber: Redis,
  redis: Redis | null,
  channels: Channels,
  listen: () => Promise<void>,
  keys: KeyResolver,
  storefrontCache: StorefrontCache,
): Promise<() => void> {
  const ping = `${channels.keysRevoked}:ping:${crypto.randomUUID()}`;
  let trusted = false;
  let lastPong = 0;
  const distrust = () => {
    if (!trusted) return;
    trusted = false;
    trustMemory(keys, storefrontCache, false);
  };
  for (const event of ['error', 'disconnect', 'node-error', 'node-reconnecting', 'node-disconnect'])
    subscriber.on(event, distrust);
  await listen();
  keys.useLocal = storefrontCache.enabled = false; // not before the first message comes back
  await subscriber
    .subscribe(ping, () => {
      lastPong = Date.now();
      if (trusted) return;
      trusted = true;
      trustMemory(keys, storefrontCache, true);
    })
    .catch(() => {});
  const timer = setInterval(() => {
    if (Date.now() - lastPong > PING_LATE_MS) distrust();
    redis?.publish(ping, '1').catch(() => {});
  }, PING_EVERY_MS);
  timer.unref?.();
  redis?.publish(ping, '1').catch(() => {});
  return () => clearInterval(timer);
}
