/**
 * The client: the surface is the key's (a publishable key reads the Storefront, a secret key works the Management
 * API), and its methods are the generated table's, walked once at construction (docs/design/sdk.md).
 */
import { Core, type Fetch } from './core.js';
import { type FollowOptions, follow, type ListEvents } from './events.js';
import { MANAGEMENT, type ManagementResources, STOREFRONT, type StorefrontResources } from './generated/operations.js';
import { listOf } from './pagination.js';
import type { RequestOptions } from './types.js';
import { type StudioEvent, verifyWebhook } from './webhooks.js';

export type Surface = 'storefront' | 'management';

export interface StudioOptions {
  /** `svc_pk_…` (Storefront) or `svc_sk_…` (Management); test keys (`…_test_…`) alike. */
  apiKey: string;
  /** The surface's address; default the local stack's: http://127.0.0.1:48004 (Storefront), :48005 (Management). */
  baseUrl?: string;
  /** Which surface, when the key's type does not say (a key held in a `string`); must agree with the key. */
  surface?: Surface;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Milliseconds an attempt may take (default 60000). */
  timeout?: number;
  /** Another `fetch` (a proxy's, a test's). */
  fetch?: Fetch;
  /** Your integration, appended to the User-Agent: `studio-sdk-typescript/0.1.0 my-app/2.3.0`. */
  appInfo?: { name: string; version?: string };
}

const DEFAULT_URL: Record<Surface, string> = {
  storefront: 'http://127.0.0.1:48004',
  management: 'http://127.0.0.1:48005',
};

export interface Webhooks {
  /** The delivery's event, narrowed by `type`, once its signature is verified; see `verifyWebhook`. */
  verify: typeof verifyWebhook;
}

interface Common {
  readonly surface: Surface;
  readonly webhooks: Webhooks;
}
export type StorefrontStudio = StorefrontResources & Common & { readonly surface: 'storefront' };
export type ManagementStudio = Omit<ManagementResources, 'events'> &
  Common & {
    readonly surface: 'management';
    events: ManagementResources['events'] & {
      /** Every event after `after`, then new ones as they come (polling with backoff); resumable with the last id. */
      follow(options?: FollowOptions): AsyncGenerator<StudioEvent>;
    };
  };

function surfaceOf(o: StudioOptions): Surface {
  const byKey = o.apiKey.startsWith('svc_pk_') ? 'storefront' : o.apiKey.startsWith('svc_sk_') ? 'management' : null;
  if (o.surface && byKey && o.surface !== byKey)
    throw new TypeError(
      `a ${byKey === 'storefront' ? 'publishable' : 'secret'} key calls the ${byKey} surface, not ${o.surface}`,
    );
  const surface = o.surface ?? byKey;
  if (!surface) throw new TypeError('apiKey must be a publishable (svc_pk_…) or a secret (svc_sk_…) key');
  return surface;
}

type Spec = readonly [method: string, path: string, flags: string];
type Table = { readonly [name: string]: Spec | Table };
const isSpec = (v: Spec | Table): v is Spec => Array.isArray(v);

/** A method of the table: path ids first, then the body (a write) or the query (a read), then the options. */
function method(core: Core, [verb, path, flags]: Spec) {
  const names = [...path.matchAll(/\{(\w+)\}/g)].length;
  const hasBody = flags.includes('b');
  const hasQuery = flags.includes('q');
  const paginated = flags.includes('p');
  return (...args: unknown[]) => {
    let i = 0;
    const filled = path.replace(/\{\w+\}/g, () => encodeURIComponent(String(args[i++])));
    const body = hasBody ? args[names] : undefined;
    const query = hasQuery && !hasBody ? (args[names] as Record<string, unknown> | undefined) : undefined;
    const options = args[names + (hasBody || hasQuery ? 1 : 0)] as RequestOptions | undefined;
    if (paginated)
      return listOf(
        (q, opts) =>
          core.request<{ data: unknown[]; next_cursor: string | null }>({
            method: verb,
            path: filled,
            query: q,
            options: opts,
          }),
        query,
        options,
      );
    return core.request({ method: verb, path: filled, query, body, options });
  };
}

function resources(core: Core, table: Table): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(table)) out[name] = isSpec(v) ? method(core, v) : resources(core, v);
  return out;
}

class StudioClient {
  readonly surface: Surface;
  readonly webhooks: Webhooks = { verify: verifyWebhook };

  constructor(options: StudioOptions) {
    if (!options || typeof options.apiKey !== 'string') throw new TypeError('new Studio({ apiKey }) needs an API key');
    this.surface = surfaceOf(options);
    const core = new Core({
      apiKey: options.apiKey,
      baseUrl: (options.baseUrl ?? DEFAULT_URL[this.surface]).replace(/\/+$/, ''),
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeout ?? 60_000,
      fetch: options.fetch ?? ((url, init) => fetch(url, init)),
      appInfo: options.appInfo,
    });
    Object.assign(this, resources(core, this.surface === 'storefront' ? STOREFRONT : MANAGEMENT));
    if (this.surface === 'management') {
      const events = (this as unknown as { events: Record<string, unknown> }).events;
      const list: ListEvents = (query, signal) =>
        core.request({ method: 'GET', path: '/v1/events', query, options: { signal } });
      events.follow = (o?: FollowOptions) => follow(list, o);
    }
  }
}

export interface StudioConstructor {
  new (options: StudioOptions & { apiKey: `svc_pk_${string}` }): StorefrontStudio;
  new (options: StudioOptions & { apiKey: `svc_sk_${string}` }): ManagementStudio;
  new (options: StudioOptions & { surface: 'storefront' }): StorefrontStudio;
  new (options: StudioOptions & { surface?: 'management' }): ManagementStudio;
  readonly prototype: Studio;
}

/**
 * `new Studio({ apiKey })`: typed for the Storefront when the key's type is a publishable key's (`svc_pk_${string}`),
 * else for the Management API; a publishable key held in a plain `string` says `surface: 'storefront'`.
 */
export const Studio = StudioClient as unknown as StudioConstructor;
export type Studio = StorefrontStudio | ManagementStudio;
