import { log } from '@studio/shared';
import type { Channels } from '@studio/shared/broadcasts';
import type { Redis } from '@studio/shared/io/redis';
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
}: BroadcastDeps): Promise<void> {
  if (!subscriber) return;
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
  const down = () => trustMemory(keys, storefrontCache, false);
  subscriber.on('error', down);
  subscriber.on('reconnecting', down);
  subscriber.on('end', down);
  subscriber.on('ready', () => (subscribed ? trustMemory(keys, storefrontCache, true) : void listen()));
  await listen();
}
