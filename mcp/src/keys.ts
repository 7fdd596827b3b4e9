/**
 * What a key is, asked of the API (`GET /v1/key`, docs/design/keys.md) when a session starts. Over stateless HTTP every
 * request starts one, so answers are kept a minute per key (by its hash, never its text), at most `MAX_KEYS` of them:
 * only the tool list can be that stale, since the gateway checks the key and its scopes on every call anyway.
 */
import { StudioApiError } from '@studio/sdk';
import { clientFor, keyHash } from './clients';
import { type KeyInfo, surfaceOfKey } from './server';
import { KEY_INFO_TTL_MS } from './ttl';
import { MCP_VERSION } from './version';

const MAX_KEYS = 10_000;

export type Described = { ok: true; info: KeyInfo } | { ok: false; error: StudioApiError };

export interface KeyDescriber {
  describe(apiKey: string): Promise<Described>;
}

export function createKeyDescriber(urls: { storefront: string; management: string }, ttlMs = KEY_INFO_TTL_MS) {
  const known = new Map<string, { info: KeyInfo; until: number }>();
  return {
    async describe(apiKey: string): Promise<Described> {
      const surface = surfaceOfKey(apiKey);
      if (!surface) throw new TypeError('not a key');
      const id = keyHash(apiKey);
      const hit = known.get(id);
      if (hit && hit.until > Date.now()) return { ok: true, info: hit.info };
      try {
        const studio = clientFor({
          apiKey,
          surface,
          baseUrl: urls[surface],
          appInfo: { name: 'studio-mcp', version: MCP_VERSION },
        });
        const info = (await studio.key.retrieve()) as KeyInfo;
        known.delete(id);
        if (known.size >= MAX_KEYS) known.delete(known.keys().next().value!);
        known.set(id, { info, until: Date.now() + ttlMs });
        return { ok: true, info };
      } catch (err) {
        if (err instanceof StudioApiError) return { ok: false, error: err };
        throw err;
      }
    },
  } satisfies KeyDescriber;
}
