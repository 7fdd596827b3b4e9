import { pgChannels } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import type { StorefrontCache } from '../cache/storefront';
import type { KeyResolver } from '../keys/resolver';

/**
 * Single-node mode's receiving end (docs/design/single-node.md): what the gateway lock's session does with
 * each NOTIFY it hears (`lock.ts` LISTENs; `notify.ts` and `notifyStorefrontChange` send). A
 * revocation, roll, origin change or studio deletion drops the keys' records, then confirms on
 * the ack channel its nonce names; the revoker returns once it heard that.
 */
export function pgBroadcastHandlers(o: {
  sql: Sql;
  keys: KeyResolver;
  storefrontCache: StorefrontCache;
}): Record<string, (payload: string) => void> {
  return {
    [pgChannels.keysRevoked]: (message) => {
      const [nonce, hashes = ''] = message.split(' ');
      for (const hash of hashes.split(',')) o.keys.evict(hash);
      if (nonce) o.sql.notify(pgChannels.ack(nonce), '1').catch(() => {});
    },
    [pgChannels.storefrontChanged]: (studioId) => o.storefrontCache.drop(studioId),
  };
}
