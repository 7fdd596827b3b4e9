#!/usr/bin/env bun
/** Operator command line (docs/design/cli.md): one JSON object on stdout; a one-line error and exit 1 on failure. */
import { parseArgs } from 'node:util';
import { createApiKey, createLoginLink, listApiKeys, revokeApiKey, rollApiKey, setKeyOrigins } from '@studio/control';
import {
  checkedSandboxName,
  createSandbox,
  DEFAULT_SANDBOX,
  deleteSandboxes,
  findSandbox,
  listSandboxes,
  resetSandbox,
  type SandboxRow,
  sandboxNamed,
} from '@studio/management-service/sandboxes';
import {
  AppError,
  answers,
  type Config,
  DEFAULT_REDIS_URL,
  expandScopes,
  type KeyKind,
  loadConfig,
  loadConfigOrExit,
  parseOriginList,
  type RedisMode,
  redisMode,
  resolveDatabase,
  SCOPE_SHORTHANDS,
  SINGLE_NODE,
  scopesOfMode,
} from '@studio/shared';
import {
  type Broadcasts,
  connectRedis,
  createRedis,
  createSql,
  postgresBroadcasts,
  quitRedis,
  type Redis,
  redisBroadcasts,
  runningGatewayMode,
} from '@studio/shared/io';
import { listen } from './lib/listen';
import { migrate } from './lib/migrate';
import { createStudio, deleteStudio, publishSite, requireStudio } from './lib/studios';
import { TRIGGER_TYPES, triggerEvent } from './lib/trigger';
import {
  webhookCreate,
  webhookDelete,
  webhookList,
  webhookRollSecret,
  webhookSetEnabled,
  webhookTest,
} from './lib/webhooks';

class UsageError extends Error {}
class ShellExports {
  constructor(readonly vars: Record<string, string>) {}
  toString() {
    return Object.entries(this.vars)
      .map(([k, v]) => `export ${k}=${v}`)
      .join('\n');
  }
}

const USAGE = `usage: bun run admin <command> [options]
  help      (this list)
  migrate
  studio:create --name <name> [--slug s] [--timezone tz] [--admin-email e] [--modes broadcast,two_way,community,coaching]
  studio:delete --studio <id>
  key:create --studio <id> --kind secret|publishable --name <name> [--scopes a:read,b:write] [--expires-in 30s|90m|24h|7d]
             [--origins https://a.example,https://*.a.example]   (publishable keys: the sites that may use it)
             [--sandbox default|<name>]   (a test key of that sandbox; default is made if it does not exist yet)
             (a secret key needs one or more scopes; all, read-all and write-all name several: for a test key,
              all includes sandbox:write)
  key:origins --key <keyId> --origins https://a.example,https://*.a.example   (publishable keys; --origins '' for any)
  key:roll --key <keyId> [--expires-in 24h]   (a new key; the old one stops after --expires-in, 0 for now)
  key:revoke --key <keyId>
  key:list --studio <id>   (the studio's keys and its sandboxes', each with its mode: live or test)
  sandbox:list --studio <id>
  sandbox:create --studio <id> --name <name>   (at most five a studio, the default included)
  sandbox:reset --studio <id> [--sandbox <name>]   (the default sandbox unless named; seeded again relative to now)
  sandbox:delete --studio <id> --sandbox <name>   (its test keys stop at once)
  site:publish --studio <id> --file site.json
  login-link --studio <id>
  seed:demo [--export]      (--export: shell export lines for STUDIO_ID, PUBLISHABLE_KEY, SECRET_KEY,
                             TEST_PUBLISHABLE_KEY, TEST_SECRET_KEY)
  webhook:create --studio <id> --url https://… [--events class.created,class.cancelled]   (prints the signing secret once)
  webhook:list --studio <id>
  webhook:enable|webhook:disable|webhook:delete --endpoint <id>
  webhook:roll-secret --endpoint <id> [--expires-in 24h]   (a new secret; the old one also signs until then, 0 for not at all)
  webhook:test --endpoint <id>   (sends it a webhook.test event; with replays, 10 at once, then 1 a second)
  webhook:listen --forward-to http://localhost:3000/hook --key <secret key> [--after <evt_id> | --from-start]
                 [--api-url <url>]   (runs until Ctrl-C: forwards each new event of the key's feed, signed with a
                  secret printed at the start, one line per delivery; not retried)
  event:trigger <type> --key <test secret key> [--api-url <url>]   (a change in the key's sandbox through the API,
                 so the event follows; types: ${TRIGGER_TYPES.join(', ')})`;

const [command, ...rest] = Bun.argv.slice(2);
// asked for: the usage on stdout, exit 0 (no database is touched)
if (command === 'help' || command === '--help' || command === '-h') {
  console.log(USAGE);
  process.exit(0);
}
const OPTIONS = {
  name: { type: 'string' },
  slug: { type: 'string' },
  timezone: { type: 'string' },
  'admin-email': { type: 'string' },
  modes: { type: 'string' },
  origins: { type: 'string' },
  studio: { type: 'string' },
  kind: { type: 'string' },
  scopes: { type: 'string' },
  key: { type: 'string' },
  file: { type: 'string' },
  export: { type: 'boolean' },
  'expires-in': { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  endpoint: { type: 'string' },
  sandbox: { type: 'string' },
  'forward-to': { type: 'string' },
  'api-url': { type: 'string' },
  after: { type: 'string' },
  'from-start': { type: 'boolean' },
} as const;
type Flag = 'export' | 'from-start';
let opts: Partial<Record<Exclude<keyof typeof OPTIONS, Flag>, string>> & Partial<Record<Flag, boolean>> = {};
let positionals: string[] = [];
/** What a command that printed its own output (a long-running one) returns: nothing more to print. */
const PRINTED = Symbol('printed');

const need = (name: keyof typeof opts): string => {
  const v = opts[name];
  if (typeof v !== 'string' || !v) throw new UsageError(`--${name} is required`);
  return v;
};
/** `30s`, `90m`, `24h`, `7d` or `0` as milliseconds. */
function duration(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!m || (m[1] !== '0' && !m[2]))
    throw new UsageError(`--expires-in must look like 30s, 90m, 24h or 7d (or 0), not ${text}`);
  return Number(m[1]) * { '': 0, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
}
const list = (s: string | undefined) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;

/** `--events a,b`: the types named (checked by the module), undefined when left out (all); given but empty is refused. */
function eventsOption(text: string | undefined): string[] | undefined {
  const types = list(text);
  if (text !== undefined && !types?.length)
    throw new UsageError('--events names at least one event type; leave it out to subscribe to all of them');
  return types;
}

/** `--origins a,b`: checked origin patterns, null when none given. */
function originsOption(text: string | undefined): string[] | null {
  const parsed = parseOriginList(list(text) ?? []);
  if ('error' in parsed) throw new UsageError(`--origins: ${parsed.error}`);
  return parsed.origins;
}

// the database as every entry point resolves it (docs/design/single-node.md): DATABASE_URL, else 127.0.0.1:5432, else the embedded one's state file
const database = resolveDatabase(process.env);
// and the mode as `bun run start` decides it: no Redis named and none on 127.0.0.1:6379 is single-node mode,
// so a revoke typed in another terminal reaches a single-node gateway over Postgres and waits for its confirmation
const singleNode = !process.env.REDIS_URL && !process.env.REDIS_CLUSTER_NODES && !answers('127.0.0.1', 6379);
let loaded: Config | null = null;
/** Read on first use, so that an unknown command is named (with the list) even where no database is found. */
const configOf = (): Config =>
  (loaded ??= loadConfigOrExit({
    ...process.env,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(singleNode ? { REDIS_URL: SINGLE_NODE } : {}),
  }));
let sql = null as ReturnType<typeof createSql> | null;
const db = () => (sql ??= createSql(configOf().DATABASE_URL, { max: 2 }));

/**
 * How a change reaches every gateway (docs/design/single-node.md): Redis pub/sub, or, in single-node mode, Postgres
 * NOTIFY. `reachable` is false when Redis mode's Redis is down (gateways then verify keys in Postgres).
 */
async function withBroadcasts<T>(
  fn: (bus: Broadcasts, reachable: boolean, mode: RedisMode, redis: Redis | null) => Promise<T>,
): Promise<T> {
  // the gateways that run decide, by the lock they hold: a Redis started after a single-node stack must not send
  // this change where no gateway listens (it would keep the key for its cache's minute)
  const mode = (await runningGatewayMode(db())) ?? redisMode(configOf());
  if (mode === 'single-node') return fn(postgresBroadcasts(db()), true, mode, null);
  const url = configOf().REDIS_URL === SINGLE_NODE ? DEFAULT_REDIS_URL : configOf().REDIS_URL;
  const redis = createRedis(url, 'admin redis', configOf().REDIS_CLUSTER_NODES);
  redis.removeAllListeners('error');
  redis.on('error', () => {});
  await connectRedis(redis);
  try {
    const usable = redis.isReady ? redis : null;
    return await fn(redisBroadcasts(usable, configOf().REDIS_PREFIX, db()), redis.isReady, mode, usable);
  } finally {
    await quitRedis(redis);
  }
}
/**
 * What a change to keys whose gateways did not all confirm says on stderr. Single-node mode: the one gateway heard it
 * but did not confirm in time (a gateway retaking its lock serves nothing until it starts afresh). Redis mode: a
 * revocation is recorded in Redis too; any other change waits at most for the key cache's minute.
 */
function warnUnconfirmed(
  change: { propagated: boolean; reachable: boolean; mode: RedisMode },
  what: 'the key' | "the studio's keys",
  revocation = false,
) {
  if (change.propagated) return;
  console.error(
    !change.reachable
      ? `warning: Redis unreachable from here (REDIS_URL); the ${revocation ? 'revocation' : 'change'} is recorded in Postgres, and a gateway that holds the key in memory keeps it for up to a minute (one whose Redis is down too verifies every key in Postgres)`
      : change.mode === 'single-node'
        ? `warning: the gateway did not confirm within 2 s that it dropped ${what} from its memory`
        : `warning: not every gateway confirmed within 2 s that it dropped ${what} (is one stalled?); ${
            revocation
              ? 'the revocation is recorded in Redis too, where a gateway that missed the message finds it within a second, at its next rate-limit lease'
              : 'a gateway that missed the message keeps the old record for at most a minute'
          }`,
  );
}

async function keyCreate() {
  const kind = need('kind');
  if (kind !== 'secret' && kind !== 'publishable')
    throw new UsageError(`--kind must be secret or publishable, not ${kind}`);
  const [liveId, name] = [need('studio'), need('name')];
  const mode = opts.sandbox === undefined ? 'live' : 'test';
  const { scopes, unknown } = expandScopes(list(opts.scopes) ?? [], mode);
  const known = scopesOfMode(mode);
  if (unknown)
    throw new UsageError(
      `unknown scope ${unknown}; scopes are ${SCOPE_SHORTHANDS.join(', ')} or any of ${known.join(', ')}`,
    );
  if (kind === 'publishable' && scopes.length) throw new UsageError('publishable keys take no --scopes');
  // as the dashboard: a secret key that can call nothing is a mistake, not a key
  if (kind === 'secret' && !scopes.length)
    throw new UsageError(`a secret key needs --scopes (one or more of ${known.join(', ')})`);
  const expiresAt = opts['expires-in'] === undefined ? null : new Date(Date.now() + duration(opts['expires-in']));
  const allowedOrigins = originsOption(opts.origins);
  if (kind === 'secret' && allowedOrigins)
    throw new UsageError('--origins is for publishable keys (secret keys never run in a browser)');
  // a test key belongs to the sandbox: a studio of its own (docs/design/test-mode.md)
  const studioId = opts.sandbox === undefined ? liveId : (await sandboxNamed(db(), liveId, opts.sandbox)).id;
  return createApiKey(db(), { studioId, kind: kind as KeyKind, name, scopes, expiresAt, allowedOrigins });
}

/** The sandbox `--sandbox` names of `--studio` (the default when left out), which must exist. */
async function namedSandbox(): Promise<SandboxRow> {
  const studio = need('studio');
  await requireStudio(db(), studio);
  return sandboxNamed(db(), studio, opts.sandbox ?? DEFAULT_SANDBOX);
}

function keyRoll() {
  const keyId = need('key');
  const expiresIn = duration(opts['expires-in'] ?? '24h');
  return withBroadcasts(async (bus, reachable, mode) => {
    const rolled = await rollApiKey(db(), bus, keyId, expiresIn);
    warnUnconfirmed({ propagated: rolled.propagated, reachable, mode }, 'the key');
    return { key: rolled.key, record: rolled.record, previous: rolled.previous };
  });
}

function keyRevoke() {
  return withBroadcasts(async (bus, reachable, mode) => {
    const record = await revokeApiKey(db(), bus, need('key'));
    warnUnconfirmed({ propagated: record.propagated, reachable, mode }, 'the key', true); // unreachable: never propagated
    return { record };
  });
}

async function sitePublish() {
  const studio = need('studio');
  const file = Bun.file(need('file'));
  if (!(await file.exists())) throw new UsageError(`no such file ${opts.file}`);
  let doc: unknown;
  try {
    doc = await file.json();
  } catch {
    throw new UsageError(`${opts.file} is not valid JSON`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new UsageError(`${opts.file} must hold a JSON object`);
  const site = await publishSite(db(), studio, doc as Record<string, unknown>);
  await withBroadcasts((bus) => bus.storefrontChanged(studio));
  return { site };
}

async function seedDemoCommand() {
  const { seedDemo } = await import('./lib/seed');
  const demo = await seedDemo(db(), configOf());
  if (!opts.export) return demo;
  // for `eval "$(bun run --silent admin seed:demo --export)"`: the keys land in the shell, not in a file
  return new ShellExports({
    STUDIO_ID: demo.studio.id,
    PUBLISHABLE_KEY: demo.keys.publishable,
    SECRET_KEY: demo.keys.secret,
    TEST_PUBLISHABLE_KEY: demo.testKeys.publishable,
    TEST_SECRET_KEY: demo.testKeys.secret,
  });
}

/**
 * The Management API the API's clients among the commands call: `--api-url`, else MANAGEMENT_PUBLIC_URL. Read without
 * looking for a database: these commands need none (the API may run on another machine).
 */
const apiUrl = () => opts['api-url'] ?? loadConfig(process.env).MANAGEMENT_PUBLIC_URL;

/** `webhook:listen`: runs until SIGINT or SIGTERM, one line per delivery on stdout (docs/design/cli.md). */
async function webhookListen() {
  const [forwardTo, key] = [need('forward-to'), need('key')];
  if (opts.after !== undefined && opts['from-start'])
    throw new UsageError('--after and --from-start: one or the other');
  if (opts.after !== undefined && !/^evt_[0-9A-Za-z]{22}$/.test(opts.after))
    throw new UsageError(`--after takes an event id (evt_…), not ${opts.after}`);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const done = await listen({
    apiUrl: apiUrl(),
    key,
    forwardTo,
    after: opts.after,
    fromStart: opts['from-start'],
    signal: stop.signal,
    say: (line) => console.log(line),
    warn: (line) => console.error(line),
  });
  console.log(`Stopped: ${done.forwarded} event(s) forwarded, ${done.failed} of them failed`);
  return PRINTED;
}

function eventTrigger() {
  const [type, ...more] = positionals;
  if (!type || more.length)
    throw new UsageError(`event:trigger takes one event type (${TRIGGER_TYPES.join(', ')}) and --key`);
  return triggerEvent(apiUrl(), need('key'), type);
}

/** Each command of USAGE, run once its options are parsed. */
const COMMANDS: Record<string, () => unknown> = {
  migrate: async () => ({ applied: await migrate(configOf().DATABASE_URL) }),
  'studio:create': () =>
    createStudio(db(), {
      name: need('name'),
      slug: opts.slug,
      timezone: opts.timezone,
      adminEmail: opts['admin-email'],
      modes: list(opts.modes),
    }),
  'studio:delete': () =>
    withBroadcasts(async (bus, reachable, mode) => {
      const { propagated, ...studio } = await deleteStudio(db(), bus, need('studio'));
      warnUnconfirmed({ propagated, reachable, mode }, "the studio's keys");
      return { studio };
    }),
  'key:create': keyCreate,
  'key:origins': () => {
    const keyId = need('key');
    // required: '' is how any website is allowed again, never a flag left out
    if (opts.origins === undefined)
      throw new UsageError("--origins is required (a list of sites, or '' for any website)");
    const origins = originsOption(opts.origins) ?? [];
    return withBroadcasts(async (bus, reachable, mode) => {
      const record = await setKeyOrigins(db(), bus, keyId, origins);
      warnUnconfirmed({ propagated: record.propagated, reachable, mode }, 'the key');
      return { record };
    });
  },
  'key:roll': keyRoll,
  'key:revoke': keyRevoke,
  'key:list': async () => {
    const studio = need('studio');
    await requireStudio(db(), studio);
    const keys = (await listApiKeys(db(), studio)).map((k) => ({ ...k, sandbox: null as string | null }));
    for (const sb of await listSandboxes(db(), studio))
      for (const k of await listApiKeys(db(), sb.id)) keys.push({ ...k, sandbox: sb.name });
    return { keys };
  },
  'sandbox:list': async () => {
    const studio = need('studio');
    await requireStudio(db(), studio);
    return { sandboxes: await listSandboxes(db(), studio) };
  },
  'sandbox:create': async () => {
    const studio = need('studio');
    await requireStudio(db(), studio);
    return { sandbox: await createSandbox(db(), studio, need('name')) };
  },
  'sandbox:reset': async () => {
    const sandbox = await namedSandbox();
    // the Redis that carries the broadcast also holds the idempotency records' copies the reset drops
    return withBroadcasts(async (bus, _reachable, _mode, redis) => ({
      sandbox: await resetSandbox(db(), bus, sandbox.id, { redis, prefix: configOf().REDIS_PREFIX }),
    }));
  },
  'sandbox:delete': async () => {
    const [studio, name] = [need('studio'), need('sandbox')];
    await requireStudio(db(), studio);
    // never made by its deletion: a default that does not exist is not there to delete
    const sandbox = await findSandbox(db(), studio, checkedSandboxName(name));
    if (!sandbox) throw new AppError('not_found', { detail: `the studio has no sandbox named ${name}` });
    return withBroadcasts(async (bus, reachable, mode) => {
      const propagated = await deleteSandboxes(db(), bus, [sandbox.id]);
      warnUnconfirmed({ propagated, reachable, mode }, "the studio's keys");
      return { sandbox: { ...sandbox, deleted: true } };
    });
  },
  'site:publish': sitePublish,
  'login-link': async () => {
    const studio = need('studio');
    await requireStudio(db(), studio);
    return createLoginLink(db(), configOf(), studio);
  },
  'seed:demo': seedDemoCommand,
  'webhook:create': () => webhookCreate(db(), configOf(), need('studio'), need('url'), eventsOption(opts.events)),
  'webhook:list': () => webhookList(db(), need('studio')),
  'webhook:enable': () => webhookSetEnabled(db(), need('endpoint'), true),
  'webhook:disable': () => webhookSetEnabled(db(), need('endpoint'), false),
  'webhook:delete': () => webhookDelete(db(), need('endpoint')),
  'webhook:roll-secret': () =>
    webhookRollSecret(
      db(),
      configOf(),
      need('endpoint'),
      opts['expires-in'] === undefined ? undefined : duration(opts['expires-in']),
    ),
  'webhook:test': () => webhookTest(db(), need('endpoint')),
  'webhook:listen': webhookListen,
  'event:trigger': eventTrigger,
};
/** The commands that take words besides their options. */
const TAKES_POSITIONALS = new Set(['event:trigger']);

async function run(): Promise<unknown> {
  try {
    const parsed = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true });
    opts = parsed.values as typeof opts;
    positionals = parsed.positionals;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (!command || !Object.hasOwn(COMMANDS, command))
    throw new UsageError(command ? `unknown command ${command}` : 'a command is required');
  if (positionals.length && !TAKES_POSITIONALS.has(command))
    throw new UsageError(`unexpected argument ${positionals[0]} (options are written --name value)`);
  return COMMANDS[command]!();
}

try {
  const out = await run();
  if (out !== PRINTED) console.log(out instanceof ShellExports ? String(out) : JSON.stringify(out, null, 2));
  await sql?.end({ timeout: 2 });
  process.exit(0);
} catch (err) {
  const msg =
    err instanceof UsageError || err instanceof AppError ? err.message : ((err as Error)?.message ?? String(err));
  console.error(`error: ${msg.split('\n')[0]}`);
  if (database.source === 'embedded' && /ECONNREFUSED|CONNECT_TIMEOUT/i.test(msg)) {
    console.error(
      `The embedded Postgres (data in ${database.dataDir}) is not running: start the stack with \`bun run start\`.`,
    );
  }
  if (!command || msg.includes('unknown command')) console.error(USAGE);
  await sql?.end({ timeout: 2 }).catch(() => {});
  process.exit(1);
}
