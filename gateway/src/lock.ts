import { log, type RedisMode } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import { GATEWAY_LOCK as LOCK } from '@studio/shared/io';
import postgres from 'postgres';

/**
 * The gateway lock (docs/design/single-node.md): every gateway holds one Postgres advisory lock while it runs,
 * on a session of its own: exclusive in single-node mode, shared in Redis mode. So a second
 * single-node gateway, or a single-node one beside Redis-mode ones, cannot start: single-node
 * mode keeps limits and broadcasts in one process, and two such processes would each admit a
 * key's whole limit and miss each other's evictions.
 *
 * In single-node mode the same session LISTENs to the broadcasts (`broadcasts/listen.ts`),
 * LISTEN first and then the lock: a revoker counts the lock's holders (`gatewaysHolding`) as the
 * gateways that must confirm, and every one it counts already hears it. A session that drops
 * loses both; the gateway takes them again (memory is trusted again only then), or, when another
 * gateway took the lock meanwhile, is told to stop (`onRefused`).
 */

/**
 * Retries after a drop wait 100, 200, then 250 ms each: one connection attempt every quarter second, which a stopped
 * Postgres refuses at once and a starting one answers with an error, costs it nothing, and the lock (so serving, in
 * single-node mode) is back within a quarter second of Postgres accepting connections.
 */
const RETRY_MAX_MS = 250;
/**
 * How often the held session is asked `select 1`, and how long it may take: an idle session hears nothing of a
 * database host that rebooted or a network that went silent (TCP keepalive takes minutes), and meanwhile the
 * lock may be gone on the server.
 */
const PING_EVERY_MS = 5_000;
const PING_WITHIN_MS = 5_000;

export class GatewayLockRefused extends Error {}

/** What a gateway refused the lock says: what is running, and what to set to run more than one. */
export function lockRefusal(mode: RedisMode): string {
  return mode === 'single-node'
    ? 'another gateway is running against this database (it holds the gateway lock). Single-node mode (REDIS_URL=none) runs one gateway only: ' +
        'to run more than one, set REDIS_URL to one Redis (or REDIS_CLUSTER_NODES) on every gateway.'
    : 'a single-node gateway (REDIS_URL=none) is running against this database, and it must be the only gateway: ' +
        'to run more than one, set REDIS_URL to one Redis (or REDIS_CLUSTER_NODES) on every gateway, that one included.';
}

export interface GatewayLockOptions {
  url: string;
  mode: RedisMode;
  /** Channels the session LISTENs to (single-node mode's broadcasts), each with its handler. */
  listen?: Record<string, (payload: string) => void>;
  /** The lock is held (again), every LISTEN live. */
  onHeld?(): void;
  /** The session dropped: the lock and the LISTENs are gone until `onHeld`. */
  onLost?(): void;
  /** Another gateway took the lock while this one's session was down: this one must stop. */
  onRefused?(message: string): void;
  /** Overrides PING_EVERY_MS and PING_WITHIN_MS (tests). */
  pingMs?: { every: number; within: number };
}

export class GatewayLock {
  held = false;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private retries = 0;
  private pinger: ReturnType<typeof setInterval> | null = null;
  private readonly session: Sql;

  constructor(private o: GatewayLockOptions) {
    // one connection for as long as the gateway runs: no idle or lifetime limit may close it under the lock
    this.session = postgres(o.url, {
      max: 1,
      idle_timeout: null,
      max_lifetime: null,
      connect_timeout: 2,
      // the retry above paces the attempts: postgres.js's own backoff (3^n/100 s after n failed connects, up to 20 s,
      // reset only by a connect that succeeds) held each attempt back seconds after Postgres was back
      backoff: false,
      fetch_types: false,
      onnotice: () => {},
      onclose: () => this.dropped(),
      // notifications of this connection (postgres.js's own `listen` hears them through this option too)
      onnotify: (channel: string, payload: string) => o.listen?.[channel]?.(payload),
      connection: { application_name: 'gateway lock' },
      // biome-ignore lint/complexity/noBannedTypes: postgres.js spells "no custom column types" as {}
    } as unknown as postgres.Options<{}>) as unknown as Sql;
  }

  /** Takes the lock; GatewayLockRefused when another gateway's excludes this one. A Postgres that does not answer is retried in the background. */
  async start(): Promise<void> {
    const got = await this.attempt();
    if (got === 'refused') {
      await this.stop();
      throw new GatewayLockRefused(lockRefusal(this.o.mode));
    }
    if (got === 'error') this.retry();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.held = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.pinger) clearInterval(this.pinger);
    await this.session.end({ timeout: 1 }).catch(() => {});
  }

  private async attempt(): Promise<'held' | 'refused' | 'error'> {
    try {
      const pid = async () => (await this.session.unsafe<{ pid: number }[]>('select pg_backend_pid() as pid'))[0]?.pid;
      const before = await pid();
      for (const channel of Object.keys(this.o.listen ?? {}))
        await this.session.unsafe(`listen "${channel.replaceAll('"', '""')}"`);
      const fn = this.o.mode === 'single-node' ? 'pg_try_advisory_lock' : 'pg_try_advisory_lock_shared';
      const [row] = await this.session.unsafe<{ ok: boolean; pid: number }[]>(
        `select ${fn}(${LOCK}) as ok, pg_backend_pid() as pid`,
      );
      if (!row?.ok) return 'refused';
      // the connection dropped between the LISTENs and the lock, and the client made a new one: the lock is held
      // on a session that does not listen; try again (the old session's lock went with it)
      if (row.pid !== before) return 'error';
    } catch {
      return 'error';
    }
    if (this.stopped) return 'error';
    this.held = true;
    this.retries = 0;
    this.watch();
    this.o.onHeld?.();
    return 'held';
  }

  /** Asks the held session `select 1` now and then; one that does not answer in time is taken as lost. */
  private watch(): void {
    const { every, within } = this.o.pingMs ?? { every: PING_EVERY_MS, within: PING_WITHIN_MS };
    this.pinger ??= setInterval(async () => {
      if (!this.held) return;
      let late: ReturnType<typeof setTimeout> | undefined;
      const answered = await Promise.race([
        this.session.unsafe('select 1').then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((resolve) => (late = setTimeout(resolve, within, false))),
      ]);
      clearTimeout(late);
      if (!answered && this.held) this.dropped('its Postgres session does not answer');
    }, every);
    this.pinger.unref?.();
  }

  private dropped(why = 'its Postgres connection dropped'): void {
    if (this.stopped) return;
    if (this.held) {
      this.held = false;
      log('warn', `gateway lock lost (${why}); taking it again`);
      this.o.onLost?.();
    }
    this.retry();
  }

  private retry(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(
      async () => {
        this.timer = null;
        const got = await this.attempt();
        if (got === 'error') return this.retry();
        if (got === 'held') return log('info', 'gateway lock held again');
        const message = lockRefusal(this.o.mode);
        log('error', `gateway lock lost to another gateway: ${message}`);
        await this.stop();
        this.o.onRefused?.(message);
      },
      Math.min(RETRY_MAX_MS, 100 * 2 ** this.retries++),
    );
    this.timer.unref?.();
  }
}
