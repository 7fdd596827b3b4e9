/**
 * The SDK clients the server calls with, one per key and MCP client, kept as long as the key's description
 * (`KEY_INFO_TTL_MS`): making one walks the SDK's table of 55 methods, which was a quarter of a stateless request's
 * cost (`bun run bench mcp`). The agent's address is the request's, not the client's: the fetch reads it from the
 * request's async context (`forwardingFor`), so one client serves concurrent requests from several addresses.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Fetch, Studio, type StudioOptions } from '@studio/sdk';
import type { Surface } from '@studio/shared';
import { KEY_INFO_TTL_MS } from './ttl';

/** A client of either surface: the tools walk its resource tree by name (call.ts), the key describer reads `key`. */
export type AnyStudio = { key: { retrieve(): Promise<unknown> } };
export const studioOf = (o: StudioOptions): AnyStudio =>
  new (Studio as unknown as new (o: StudioOptions) => AnyStudio)(o);

const forwarded = new AsyncLocalStorage<string>();

/** Runs `fn` with `X-Forwarded-For: address` on every call it makes to the API. */
export const forwardingFor = <T>(address: string, fn: () => T): T => forwarded.run(address, fn);

const forwardingFetch: Fetch = (url, init) => {
  const address = forwarded.getStore();
  if (!address) return fetch(url, init);
  const headers = new Headers(init.headers);
  headers.set('x-forwarded-for', address);
  return fetch(url, { ...init, headers });
};

const MAX_CLIENTS = 10_000;
const clients = new Map<string, { studio: AnyStudio; until: number }>();

export const keyHash = (apiKey: string) => new Bun.CryptoHasher('sha256').update(apiKey).digest('base64url');

export function clientFor(o: {
  apiKey: string;
  surface: Surface;
  baseUrl: string;
  appInfo: { name: string; version?: string };
}): AnyStudio {
  const id = `${keyHash(o.apiKey)} ${o.baseUrl} ${o.appInfo.name}/${o.appInfo.version ?? ''}`;
  const hit = clients.get(id);
  if (hit && hit.until > Date.now()) return hit.studio;
  const studio = studioOf({ ...o, fetch: forwardingFetch });
  clients.delete(id);
  if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value!);
  clients.set(id, { studio, until: Date.now() + KEY_INFO_TTL_MS });
  return studio;
}
