import type { Redis } from './redis';

/** Channel on which any writer announces that a studio's Storefront data changed. */
export const storefrontChannel = (prefix: string) => `${prefix}storefront:invalidate`;

/** Tell every gateway to drop its cached Storefront responses of a studio. Best effort. */
export async function publishStorefrontChange(redis: Redis | null, prefix: string, studioId: string): Promise<void> {
  if (!redis?.isReady) return;
  try {
    await redis.publish(storefrontChannel(prefix), studioId);
  } catch {
    /* the gateway's short cache lifetime bounds staleness when Redis is down */
  }
}
