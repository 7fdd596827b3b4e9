import { channels } from './broadcasts';
import type { Redis } from './redis';

/** Tell every gateway to drop its cached Storefront responses of a studio. Best effort. */
export async function publishStorefrontChange(redis: Redis | null, prefix: string, studioId: string): Promise<void> {
  if (!redis?.isReady) return;
  try {
    await redis.publish(channels(prefix).storefrontChanged, studioId);
  } catch {
    /* the gateway's short cache lifetime bounds staleness when Redis is down */
  }
}
