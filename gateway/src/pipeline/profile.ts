import { type Config, type KeyKind, problemTypeBase, type Surface } from '@studio/shared';
import type { StorefrontCache } from '../cache/storefront';
import { Pool } from '../forward/http1';
import type { ForwardOptions } from '../forward/proxy';

/** Everything that differs between the two surfaces, so no step asks which surface it serves. */
export interface SurfaceProfile {
  surface: Surface;
  keyKind: KeyKind;
  /** How a 401 names the key this surface wants. */
  expectedKey: string;
  forward: ForwardOptions;
  typeBase: string;
  /** Browser calls: CORS on every answer (the record step's `answerHeaders`) and preflights answered (Storefront). */
  cors: boolean;
  /** Answers kept at the gateway (Storefront reads). */
  cache: StorefrontCache | null;
  /** Successful writes here change what that cache may serve (Management). */
  invalidates: StorefrontCache | null;
}

export function surfaceProfiles(config: Config, storefrontCache: StorefrontCache): Record<Surface, SurfaceProfile> {
  const forward = (upstream: string): ForwardOptions => ({
    pool: new Pool(upstream),
    secret: config.GATEWAY_SECRET,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    bodyTimeoutMs: config.REQUEST_BODY_TIMEOUT_MS,
  });
  return {
    storefront: {
      surface: 'storefront',
      keyKind: 'publishable',
      expectedKey: 'a publishable key (svc_pk_…)',
      forward: forward(config.STOREFRONT_SERVICE_URL),
      typeBase: problemTypeBase(config, 'storefront'),
      cors: true,
      cache: storefrontCache,
      invalidates: null,
    },
    management: {
      surface: 'management',
      keyKind: 'secret',
      expectedKey: 'a secret key (svc_sk_…)',
      forward: forward(config.MANAGEMENT_SERVICE_URL),
      typeBase: problemTypeBase(config, 'management'),
      cors: false,
      cache: null,
      invalidates: storefrontCache,
    },
  };
}
