import { expect } from 'bun:test';
import { type Config, loadConfig } from '@studio/shared';
import { type Answer, asResponse } from '../../src/answer';
import { StorefrontCache } from '../../src/cache/storefront';
import type { KeyRecord } from '../../src/keys/resolver';
import { type Ctx, newCtx } from '../../src/pipeline/context';
import { surfaceProfiles } from '../../src/pipeline/profile';

/** Profiles of both surfaces on a configuration of the test's choosing. */
export function profiles(env: Record<string, string> = {}) {
  const config: Config = loadConfig({
    GATEWAY_SECRET: 'unit-test-gateway-secret',
    PROBLEM_TYPE_BASE: 'https://errors.test/#',
    ...env,
  });
  const cache = new StorefrontCache();
  return { config, cache, ...surfaceProfiles(config, cache) };
}

/** A context as the pipeline makes it, for a request from `peer`. */
export function ctxOf(url: string, init: RequestInit = {}, peer = '203.0.113.7'): Ctx {
  return newCtx(new Request(url, init), { requestIP: () => ({ address: peer }) });
}

export const record = (over: Partial<KeyRecord> = {}): KeyRecord => ({
  id: 'key_unit',
  studioId: 'std_unit',
  kind: 'secret',
  mode: 'live',
  scopes: ['classes:read'],
  revoked: false,
  studioLive: true,
  expiresAt: null,
  allowedOrigins: null,
  ...over,
});

/** A refusal's problem body, read as a client would (a held answer as the Response the surface makes of it). */
export async function problemOf(answer: Answer) {
  const res = asResponse(answer);
  expect(res.headers.get('content-type')).toStartWith('application/problem+json');
  return (await res.json()) as { code: string; status: number; type: string; detail: string; [k: string]: unknown };
}
