import { Type as T, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Surface } from './operations';

/** Token bucket `rate:burst`, e.g. `100:200`. */
const Bucket = T.String({ pattern: '^\\d+(\\.\\d+)?:\\d+$' });
const Port = T.Integer({ minimum: 0, maximum: 65535 });

export const ConfigSchema = T.Object({
  HOST: T.String({ default: '127.0.0.1' }),
  STOREFRONT_PORT: Port, MANAGEMENT_PORT: Port, DASHBOARD_PORT: Port,
  STOREFRONT_SERVICE_PORT: Port, MANAGEMENT_SERVICE_PORT: Port,
  STOREFRONT_SERVICE_URL: T.String({ default: 'http://127.0.0.1:48104' }),
  MANAGEMENT_SERVICE_URL: T.String({ default: 'http://127.0.0.1:48105' }),
  STOREFRONT_PUBLIC_URL: T.String({ default: 'http://127.0.0.1:48004' }),
  MANAGEMENT_PUBLIC_URL: T.String({ default: 'http://127.0.0.1:48005' }),
  DASHBOARD_PUBLIC_URL: T.String({ default: 'http://127.0.0.1:48006' }),
  DATABASE_URL: T.String({ default: 'postgres://postgres@127.0.0.1:5432/studio' }),
  REDIS_URL: T.String({ default: 'redis://127.0.0.1:6379' }),
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
  /** 401s for unknown keys (well formed, no such key) per client address (IPv6: per /64); over it, 429 before any lookup. */
  RATE_LIMIT_UNKNOWN_KEY: Bucket,
  /** Bytes the gateway's Storefront answer cache may hold, in MiB (every representation of every answer). */
  STOREFRONT_CACHE_MB: T.Integer({ minimum: 0, default: 64 }),
  /** Comma-separated peer addresses whose X-Forwarded-For is believed. */
  TRUSTED_PROXIES: T.String({ default: '' }),
  UPSTREAM_TIMEOUT_MS: T.Integer({ minimum: 1, default: 10_000 }),
  /** How often the gateway writes its batched activity entries. */
  ACTIVITY_FLUSH_MS: T.Integer({ minimum: 10, default: 500 }),
  /** Base of every problem `type` URI; empty means the surface's own `<public URL>/docs/problems#`. */
  PROBLEM_TYPE_BASE: T.String({ default: '' }),
  /** The gateway's operations port: /metrics, /healthz, /readyz (contract §1). */
  OPS_PORT: Port,
  /** OTLP/HTTP collector base URL (e.g. http://127.0.0.1:4318); empty: no spans are exported. */
  OTEL_EXPORTER_OTLP_ENDPOINT: T.String({ default: '' }),
  LOG_LEVEL: T.Union([T.Literal('debug'), T.Literal('info'), T.Literal('warn'), T.Literal('error')], { default: 'info' }),
});
export type Config = Static<typeof ConfigSchema>;

/** Local-development defaults. Secrets here are for a developer's machine only; production sets its own. */
const DEFAULTS: Partial<Record<keyof Config, string>> = {
  STOREFRONT_PORT: '48004', MANAGEMENT_PORT: '48005', DASHBOARD_PORT: '48006',
  STOREFRONT_SERVICE_PORT: '48104', MANAGEMENT_SERVICE_PORT: '48105', OPS_PORT: '48007',
  GATEWAY_SECRET: 'dev-gateway-secret-change-me',
  DASHBOARD_SECRET: 'dev-dashboard-secret-change-me',
  CURSOR_SECRET: 'dev-cursor-secret-change-me',
  RATE_LIMIT_SECRET: '100:200',
  RATE_LIMIT_PUBLISHABLE_CLIENT: '20:60',
  RATE_LIMIT_PUBLISHABLE: '1000:2000',
  RATE_LIMIT_UNKNOWN_KEY: '10:50',
};

export class ConfigError extends Error {}

/** One typed object from the environment; a clear error naming the variable when one is wrong. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(ConfigSchema.properties)) {
    const v = env[name] ?? DEFAULTS[name as keyof Config];
    if (v !== undefined && v !== '') raw[name] = v;
  }
  const converted = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw)) as Record<string, unknown>;
  Object.assign(converted, overrides);
  const err = Value.Errors(ConfigSchema, converted).First();
  if (err) {
    const name = err.path.replace(/^\//, '') || '(config)';
    throw new ConfigError(`invalid environment variable ${name}: ${err.message} (got ${JSON.stringify(raw[name] ?? null)})`);
  }
  refuseDevelopmentSecrets(converted as Config);
  return converted as Config;
}

/** `loadConfig` at a process's start: a wrong or unsafe setting ends it with its message (exit 1), not a stack trace. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`error: ${err.message}`);
    process.exit(1);
  }
}

const DEVELOPMENT_SECRETS = ['GATEWAY_SECRET', 'DASHBOARD_SECRET', 'CURSOR_SECRET'] as const;

/** An address only this machine can reach: 127.0.0.0/8, ::1 or localhost. */
export const isLoopbackHost = (host: string): boolean => /^(?:127(?:\.\d{1,3}){3}|::1|\[::1\]|(?:0{1,4}:){7}0{0,3}1|localhost)$/i.test(host);

/**
 * The development defaults above are public (they are in this file): a process listening
 * beyond loopback refuses to start with any of them (contract §18), unless told that this
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
