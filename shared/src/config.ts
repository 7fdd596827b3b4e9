import { type Static, Type as T } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { type DatabaseResolution, LOCAL_DATABASE_URL, resolveDatabase } from './database';
import type { Surface } from './operations';

/** Token bucket `rate:burst`, e.g. `100:200`. */
const Bucket = T.String({ pattern: '^\\d+(\\.\\d+)?:\\d+$' });
const Port = T.Integer({ minimum: 0, maximum: 65535 });
/** Where a process looks for Redis when REDIS_URL is not set. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export const ConfigSchema = T.Object({
  HOST: T.String({ default: '127.0.0.1' }),
  STOREFRONT_PORT: Port,
  MANAGEMENT_PORT: Port,
  DASHBOARD_PORT: Port,
  STOREFRONT_SERVICE_PORT: Port,
  MANAGEMENT_SERVICE_PORT: Port,
  STOREFRONT_SERVICE_URL: T.String({ default: 'http://127.0.0.1:48104' }),
  MANAGEMENT_SERVICE_URL: T.String({ default: 'http://127.0.0.1:48105' }),
  STOREFRONT_PUBLIC_URL: T.String({ default: 'http://127.0.0.1:48004' }),
  MANAGEMENT_PUBLIC_URL: T.String({ default: 'http://127.0.0.1:48005' }),
  DASHBOARD_PUBLIC_URL: T.String({ default: 'http://127.0.0.1:48006' }),
  /** Unset: resolved as docs/design/single-node.md says (`resolveDatabase`): Postgres on 127.0.0.1:5432 when it answers, else the embedded one. */
  DATABASE_URL: T.String({ default: LOCAL_DATABASE_URL }),
  /** `none`: single-node mode, no Redis at all (docs/design/single-node.md; `redisMode`). */
  REDIS_URL: T.String({ default: DEFAULT_REDIS_URL }),
  /** Comma-separated `redis://host:port` seeds of a Redis Cluster; when set, REDIS_URL is not used. */
  REDIS_CLUSTER_NODES: T.String({ default: '' }),
  /** Namespace of every Redis key and channel, so several stacks can share one Redis. */
  REDIS_PREFIX: T.String({ default: 'studio:' }),
  GATEWAY_SECRET: T.String({ minLength: 16 }),
  DASHBOARD_SECRET: T.String({ minLength: 16 }),
  CURSOR_SECRET: T.String({ minLength: 16 }),
  /** Lets a process listening beyond loopback start with the development default secrets (compose, for local development). */
  ALLOW_DEVELOPMENT_SECRETS: T.Boolean({ default: false }),
  RATE_LIMIT_SECRET: Bucket,
  RATE_LIMIT_PUBLISHABLE_CLIENT: Bucket,
  RATE_LIMIT_PUBLISHABLE: Bucket,
  /** A test key's own bucket, either kind (docs/design/test-mode.md): in place of RATE_LIMIT_SECRET or RATE_LIMIT_PUBLISHABLE. */
  RATE_LIMIT_TEST: Bucket,
  /** 401s for unknown keys (well formed, no such key) per client address (IPv6: per /64); over it, 429 before any lookup. */
  RATE_LIMIT_UNKNOWN_KEY: Bucket,
  /** Bytes the gateway's Storefront answer cache may hold, in MiB (every representation of every answer). */
  STOREFRONT_CACHE_MB: T.Integer({ minimum: 0, default: 64 }),
  /** Comma-separated peer addresses whose X-Forwarded-For is believed. */
  TRUSTED_PROXIES: T.String({ default: '' }),
  UPSTREAM_TIMEOUT_MS: T.Integer({ minimum: 1, default: 10_000 }),
  /** How long a request body may take to arrive whole at the gateway (a trickle of bytes included); then 408. */
  REQUEST_BODY_TIMEOUT_MS: T.Integer({ minimum: 1, default: 60_000 }),
  /** How often the gateway writes its batched activity entries. */
  ACTIVITY_FLUSH_MS: T.Integer({ minimum: 10, default: 500 }),
  /** Base of every problem `type` URI; empty means the surface's own `<public URL>/docs/problems#`. */
  PROBLEM_TYPE_BASE: T.String({ default: '' }),
  /** The gateway's operations port: /metrics, /healthz, /readyz (docs/design/processes.md). */
  OPS_PORT: Port,
  /** The dashboard process's operations port: `/metrics`, `/healthz`, `/readyz` (never the public DASHBOARD_PORT). */
  DASHBOARD_OPS_PORT: Port,
  /**
   * OTLP/HTTP collector base URL (e.g. http://127.0.0.1:4318); empty: no spans are exported. Checked and read here
   * only to turn tracing on: the OpenTelemetry SDK reads it, and its other OTEL_* variables, from the environment
   * itself (docs/design/observability.md).
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: T.String({ default: '' }),
  LOG_LEVEL: T.Union([T.Literal('debug'), T.Literal('info'), T.Literal('warn'), T.Literal('error')], {
    default: 'info',
  }),
  /**
   * Encrypts webhook signing secrets at rest (AES-256-GCM): 32 random bytes as base64 (`openssl rand -base64 32`).
   * To rotate, put the new key first and keep the old one after a comma: the first encrypts, every one decrypts.
   */
  WEBHOOK_SECRET_KEY: T.String({ pattern: '^[A-Za-z0-9+/]{43}=(,[A-Za-z0-9+/]{43}=)*$' }),
  /** Delays between webhook attempts after the first (`ms`, `s`, `m`, `h`, `d`), each with jitter; after the last, the delivery has failed. */
  WEBHOOK_RETRY_SCHEDULE: T.String({
    pattern: '^\\d+(ms|s|m|h|d)(,\\d+(ms|s|m|h|d))*$',
    default: '5s,5m,30m,2h,5h,10h,10h',
  }),
  /** Attempts in flight to one endpoint at once, per dispatcher. */
  WEBHOOK_ENDPOINT_CONCURRENCY: T.Integer({ minimum: 1, maximum: 1000, default: 16 }),
  /** A tenant's pending webhook deliveries (a studio's and its sandboxes' together) past which its new events wait (deferred, never dropped) for that backlog to drain. */
  WEBHOOK_PENDING_BUDGET: T.Integer({ minimum: 1, maximum: 10_000_000, default: 10_000 }),
  /** The MCP server's Streamable HTTP port: `http://<HOST>:<MCP_PORT>/mcp`, with `/healthz` and `/readyz` (docs/design/mcp.md). */
  MCP_PORT: Port,
  /** Comma-separated origins (`https://app.example.com`) whose browsers may call the MCP server; a request from any other `Origin` is 403. Default none. */
  MCP_ALLOWED_ORIGINS: T.String({ default: '' }),
  /** The stdio MCP server's key (`svc_sk_…` or `svc_pk_…`): the agent's own. Unused by the HTTP server, whose callers send theirs. */
  STUDIO_API_KEY: T.String({ default: '' }),
  /** The stdio MCP server's toolsets, comma-separated resources (`classes,schedule`); empty: every tool the key may call. */
  MCP_TOOLSETS: T.String({ default: '' }),
  /** Allows http:// and private or reserved addresses as webhook endpoints: local development and tests only. */
  WEBHOOK_ALLOW_PRIVATE_URLS: T.Boolean({ default: false }),
});
export type Config = Static<typeof ConfigSchema>;

/** Local-development defaults. Secrets here are for a developer's machine only; production sets its own. */
const DEFAULTS: Partial<Record<keyof Config, string>> = {
  STOREFRONT_PORT: '48004',
  MANAGEMENT_PORT: '48005',
  DASHBOARD_PORT: '48006',
  STOREFRONT_SERVICE_PORT: '48104',
  MANAGEMENT_SERVICE_PORT: '48105',
  OPS_PORT: '48007',
  DASHBOARD_OPS_PORT: '48009',
  MCP_PORT: '48008',
  GATEWAY_SECRET: 'dev-gateway-secret-change-me',
  DASHBOARD_SECRET: 'dev-dashboard-secret-change-me',
  CURSOR_SECRET: 'dev-cursor-secret-change-me',
  RATE_LIMIT_SECRET: '100:200',
  RATE_LIMIT_PUBLISHABLE_CLIENT: '20:60',
  RATE_LIMIT_PUBLISHABLE: '1000:2000',
  RATE_LIMIT_TEST: '25:50',
  RATE_LIMIT_UNKNOWN_KEY: '10:50',
  WEBHOOK_SECRET_KEY: 'ZGV2LXdlYmhvb2stc2VjcmV0LWtleS1jaGFuZ2UtbWU=', // base64 of "dev-webhook-secret-key-change-me"
};

export class ConfigError extends Error {}

/**
 * One typed object from the environment; a clear error naming the variable when one is wrong.
 * Without DATABASE_URL the database is resolved (docs/design/single-node.md); while no embedded Postgres has been
 * started yet, DATABASE_URL falls back to 127.0.0.1:5432 (`loadConfigOrExit` refuses that case).
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Config> = {},
): Config {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(ConfigSchema.properties)) {
    const v =
      name === 'DATABASE_URL' && !env.DATABASE_URL && !overrides.DATABASE_URL
        ? (resolveDatabase(env).url ?? undefined)
        : (env[name] ?? DEFAULTS[name as keyof Config]);
    if (v !== undefined && v !== '') raw[name] = v;
  }
  refuseFractions(raw);
  const converted = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw)) as Record<string, unknown>;
  Object.assign(converted, overrides);
  const err = Value.Errors(ConfigSchema, converted).First();
  if (err) {
    const name = err.path.replace(/^\//, '') || '(config)';
    throw new ConfigError(
      `invalid environment variable ${name}: ${err.message} (got ${JSON.stringify(raw[name] ?? null)})`,
    );
  }
  refuseMalformedUrls(converted as Config);
  refuseMalformedAddresses(converted as Config);
  refuseDevelopmentSecrets(converted as Config);
  if (converted.REDIS_URL === SINGLE_NODE && converted.REDIS_CLUSTER_NODES) {
    throw new ConfigError(
      'REDIS_URL=none (single-node mode, no Redis) and REDIS_CLUSTER_NODES (a Redis Cluster) contradict each other: unset one of them',
    );
  }
  return converted as Config;
}

const wrongValue = (name: string, what: string, got: string) =>
  new ConfigError(`invalid environment variable ${name}: must be ${what} (got ${JSON.stringify(got)})`);

/** A URL of the scheme a client needs, or the process stops naming the variable (not with a client's stack trace later). */
function refuseMalformedUrls(c: Config) {
  const url = (v: string, schemes: RegExp) => URL.canParse(v) && schemes.test(new URL(v).protocol);
  if (!url(c.DATABASE_URL, /^postgres(ql)?:$/))
    throw wrongValue(
      'DATABASE_URL',
      'a postgres:// URL, such as postgres://postgres@127.0.0.1:5432/studio',
      c.DATABASE_URL,
    );
  if (c.REDIS_URL !== SINGLE_NODE && !url(c.REDIS_URL, /^rediss?:$/))
    throw wrongValue('REDIS_URL', 'a redis:// or rediss:// URL, or none (single-node mode)', c.REDIS_URL);
  for (const seed of c.REDIS_CLUSTER_NODES ? c.REDIS_CLUSTER_NODES.split(',') : [])
    if (!url(seed.trim(), /^rediss?:$/))
      throw wrongValue('REDIS_CLUSTER_NODES', 'comma-separated redis:// URLs', c.REDIS_CLUSTER_NODES);
  // the gateway's hop to its services speaks plain HTTP/1.1 (gateway/src/forward/http1.ts)
  for (const name of ['STOREFRONT_SERVICE_URL', 'MANAGEMENT_SERVICE_URL'] as const)
    if (!url(c[name], /^http:$/)) throw wrongValue(name, 'an http:// URL, such as http://127.0.0.1:48104', c[name]);
}

/** A whole number as written: converting `1.5` to an integer would cut it to 1 without a word. */
function refuseFractions(raw: Record<string, unknown>) {
  for (const [name, schema] of Object.entries(ConfigSchema.properties))
    if (schema.type === 'integer' && typeof raw[name] === 'string' && !/^\s*-?\d+\s*$/.test(raw[name]))
      throw wrongValue(name, 'a whole number', raw[name]);
}

/** An IPv4 address in dotted decimal, or an IPv6 one (as a URL's host in brackets takes it): no range, no name. */
const isIpAddress = (s: string) =>
  /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(s) ||
  (s.includes(':') && !s.includes('/') && URL.canParse(`http://[${s}]/`));

/**
 * The addresses people and clients are given (public URLs, login links, problem types, the trace collector) and the
 * proxies trusted, checked as the process starts: a public URL without its scheme made unusable links, and a range
 * in TRUSTED_PROXIES (matched address by address) silently trusted no proxy.
 */
function refuseMalformedAddresses(c: Config) {
  const httpUrl = (v: string) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol);
  for (const name of ['STOREFRONT_PUBLIC_URL', 'MANAGEMENT_PUBLIC_URL', 'DASHBOARD_PUBLIC_URL'] as const)
    if (!httpUrl(c[name]))
      throw wrongValue(name, 'an http:// or https:// URL, such as https://api.example.com', c[name]);
  if (c.OTEL_EXPORTER_OTLP_ENDPOINT && !httpUrl(c.OTEL_EXPORTER_OTLP_ENDPOINT))
    throw wrongValue(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'an http:// or https:// URL, or empty',
      c.OTEL_EXPORTER_OTLP_ENDPOINT,
    );
  if (c.PROBLEM_TYPE_BASE && !URL.canParse(c.PROBLEM_TYPE_BASE))
    throw wrongValue(
      'PROBLEM_TYPE_BASE',
      'an absolute URI, such as https://docs.example.com/problems#',
      c.PROBLEM_TYPE_BASE,
    );
  for (const origin of mcpAllowedOrigins(c))
    if (!URL.canParse(origin) || new URL(origin).origin !== origin)
      throw wrongValue(
        'MCP_ALLOWED_ORIGINS',
        'comma-separated origins, each a scheme, host and port only, such as https://app.example.com',
        c.MCP_ALLOWED_ORIGINS,
      );
  for (const proxy of c.TRUSTED_PROXIES.split(',').map((p) => p.trim()))
    if (proxy && !isIpAddress(proxy))
      throw wrongValue(
        'TRUSTED_PROXIES',
        'comma-separated IP addresses, each a peer (a range such as 10.0.0.0/8 is not matched)',
        c.TRUSTED_PROXIES,
      );
}

/** MCP_ALLOWED_ORIGINS as a list. */
export const mcpAllowedOrigins = (c: Pick<Config, 'MCP_ALLOWED_ORIGINS'>): string[] =>
  c.MCP_ALLOWED_ORIGINS.split(',')
    .map((o) => o.trim())
    .filter(Boolean);

/**
 * The MCP server's configuration, stdio's included: the MCP server never reads the database (it is a client of the
 * API), so none is looked for, and a desktop with no Postgres starts it all the same.
 */
export function loadMcpConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(env, { DATABASE_URL: LOCAL_DATABASE_URL });
}

/** The REDIS_URL that means single-node mode (docs/design/single-node.md). */
export const SINGLE_NODE = 'none';
/**
 * How replicas agree (docs/design/single-node.md): through Redis (one server or a cluster), or, with
 * `REDIS_URL=none`, not at all: one gateway, its limits exact in memory, its broadcasts over
 * Postgres LISTEN/NOTIFY. In Redis mode a Redis that is down is a degraded state (docs/design/gateway.md), never
 * single-node mode.
 */
export type RedisMode = 'redis' | 'single-node';
export const redisMode = (c: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>): RedisMode =>
  c.REDIS_URL === SINGLE_NODE && !c.REDIS_CLUSTER_NODES ? 'single-node' : 'redis';

/** Where no database can be found: nothing set, nothing on 5432, no embedded Postgres started here yet. */
export function noDatabaseMessage(db: Extract<DatabaseResolution, { source: 'embedded' }>): string {
  return (
    `no database: DATABASE_URL is not set, nothing answers on 127.0.0.1:5432, and no embedded Postgres has been started here yet (no usable ${db.stateFile}): ` +
    'run `bun run start` (it starts one), or set DATABASE_URL'
  );
}

/** `loadConfig` at a process's start: a wrong or unsafe setting, or no database at all, ends it with its message (exit 1), not a stack trace. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    const db = resolveDatabase(env);
    if (db.url === null)
      throw new ConfigError(noDatabaseMessage(db as Extract<DatabaseResolution, { source: 'embedded' }>));
    return loadConfig({ ...env, DATABASE_URL: db.url });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`error: ${err.message}`);
    process.exit(1);
  }
}

const DEVELOPMENT_SECRETS = ['GATEWAY_SECRET', 'DASHBOARD_SECRET', 'CURSOR_SECRET', 'WEBHOOK_SECRET_KEY'] as const;

/** An address only this machine can reach: 127.0.0.0/8, ::1 or localhost. */
export const isLoopbackHost = (host: string): boolean =>
  /^(?:127(?:\.\d{1,3}){3}|::1|\[::1\]|(?:0{1,4}:){7}0{0,3}1|localhost)$/i.test(host);

/**
 * The development defaults above are public (they are in this file): a process listening
 * beyond loopback refuses to start with any of them (docs/design/hostile-callers.md), unless told that this
 * is local development (ALLOW_DEVELOPMENT_SECRETS=true, as compose sets).
 */
function refuseDevelopmentSecrets(c: Config) {
  if (c.ALLOW_DEVELOPMENT_SECRETS || isLoopbackHost(c.HOST)) return;
  const named = DEVELOPMENT_SECRETS.filter((n) => c[n] === DEFAULTS[n]);
  if (!named.length) return;
  throw new ConfigError(
    `${named.join(', ')} still ${named.length > 1 ? 'hold their' : 'holds its'} development default while HOST=${c.HOST} listens beyond this machine: ` +
      `set ${named.length > 1 ? 'each' : 'it'} to a long random value (openssl rand -hex 32), or set ALLOW_DEVELOPMENT_SECRETS=true for local development only.`,
  );
}

/** A surface's public base URL (documents' `servers`, problem `type` URIs). */
export const publicUrlOf = (config: Config, surface: Surface): string =>
  surface === 'storefront' ? config.STOREFRONT_PUBLIC_URL : config.MANAGEMENT_PUBLIC_URL;

/** The base of problem `type` URIs on a surface: the configured one, or the surface's own problems page. */
export function problemTypeBase(config: Config, surface: Surface): string {
  return config.PROBLEM_TYPE_BASE || `${publicUrlOf(config, surface)}/docs/problems#`;
}

export function parseBucket(spec: string): { rate: number; burst: number } {
  const [rate, burst] = spec.split(':').map(Number) as [number, number];
  return { rate, burst };
}
