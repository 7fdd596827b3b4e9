import { randomBase62 } from '../../base62';
import { channels } from '../../broadcasts';
import { REVOKED_MARKER_TTL_S, redisNames, STALE_MARKER_TTL_S } from '../../redis-names';
import { bounded, type Redis, redisUsable, subscribers } from '../redis';

/** How long a revoke waits for every gateway to confirm. */
const ACK_TIMEOUT_MS = 2_000;

/**
 * Tell every gateway replica to drop the cached records of these keys, and wait until
 * each one that received the broadcast confirms it applied it: after this returns
 * true, no replica answers from a stale record. `revoked` also sets the revoked
 * marker that the rate limiter's script refuses. False when Redis is unreachable or a
 * replica did not confirm in time (a replica without Redis verifies every key in
 * Postgres, so it needs no broadcast). `running`: how many gateways run against this
 * database (the holders of the gateway lock): a broadcast that fewer subscribers heard
 * (sent on another Redis, or under another REDIS_PREFIX) is not confirmed by their silence.
 */
export async function broadcastEviction(
  redis: Redis | null,
  prefix: string,
  hashes: string[],
  o: { revoked: boolean },
  running?: () => Promise<number>,
): Promise<boolean> {
  const n = redisNames(prefix);
  const ch = channels(prefix);
  if (!redisUsable(redis)) return false;
  if (!hashes.length) return true;
  const nonce = randomBase62(16);
  try {
    // per key, its markers and its record in one MULTI (one hash slot on a cluster: the `{hash}` tag);
    // all of them are in place before the broadcast goes out
    await Promise.all(
      hashes.map((h) => {
        const m = redis.multi();
        if (o.revoked) m.set(n.revoked(h), '1', { EX: REVOKED_MARKER_TTL_S });
        return bounded(redis, m.set(n.stale(h), '1', { EX: STALE_MARKER_TTL_S }).del(n.record(h)).exec());
      }),
    );
    const published = await bounded(redis, redis.publish(ch.keysRevoked, `${nonce} ${hashes.join(',')}`));
    const receivers = Math.max(
      await subscribers(redis, ch.keysRevoked, published),
      running ? await running().catch(() => 0) : 0,
    );
    const deadline = Date.now() + ACK_TIMEOUT_MS;
    for (;;) {
      const acks = receivers > 0 ? await bounded(redis, redis.lLen(ch.ack(nonce))) : 0;
      if (acks >= receivers) break;
      if (Date.now() > deadline) return false;
      await Bun.sleep(1);
    }
    if (receivers > 0) await bounded(redis, redis.del(ch.ack(nonce)));
    return true;
  } catch {
    return false;
  }
}
