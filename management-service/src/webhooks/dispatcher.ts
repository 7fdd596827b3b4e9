/**
 * The webhook dispatcher (docs/design/webhooks.md). It runs inside every
 * management-service process (started and drained by its main.ts); any number of them share the
 * work through Postgres alone:
 *
 *   wake (LISTEN studio_events, a finished attempt, a retry falling due, or the 1 s poll)
 *   → fan-out (events → deliveries, outside the writes' transactions)
 *   → claim due deliveries (SKIP LOCKED, leased) → attempt each → record it.
 *
 * Claims take the tenants with due deliveries in turns (a studio and its sandboxes are one tenant), and each tenant's
 * endpoints in turns (queries.ts). Concurrency is bounded overall (`maxInFlight`), per tenant and per endpoint
 * (WEBHOOK_ENDPOINT_CONCURRENCY): an endpoint or tenant at its bound is left out of the next claim, so a slow receiver holds at most its own
 * share of the slots and never the others' (`mayTake`). A Postgres outage only pauses it: the loop retries
 * every poll, an attempt's result is kept in memory and recorded once Postgres is back, and a
 * delivery whose recording was lost with the process is redone when its lease ends (at least once).
 */
import type { Config } from '@studio/shared';
import { log } from '@studio/shared';
import type { Metrics, Sql } from '@studio/shared/io';
import type { Resolver } from '@studio/shared/webhooks';
import {
  createSecretBox,
  EVENTS_CHANNEL,
  eventBody,
  parseRetrySchedule,
  recordDeliverySetting,
  retryDelay,
  secretBytes,
} from '@studio/shared/webhooks';
import {
  type Claimed,
  catchUpDeferred,
  claimDue,
  deleteExpired,
  failClaim,
  fanOutBatch,
  pendingStats,
  type Recorded,
  recordAttempt,
  recordSuccesses,
  releaseClaims,
} from './queries';
import { type AttemptResult, sendWebhook } from './send';

export interface DispatcherDeps {
  sql: Sql;
  config: Config;
  /** The process's metrics (its /metrics); leave out where two dispatchers share a process. */
  metrics?: Metrics;
  /** An attempt's time limit (default 10 s: docs/design/webhooks.md). Tests shorten it. */
  timeoutMs?: number;
  /** How long a claimed delivery is this dispatcher's before another may redo it (default: the time limit + 20 s). */
  leaseMs?: number;
  /** Attempts in flight at once, all endpoints together (default 64). */
  maxInFlight?: number;
  /** The fallback poll when no notification comes (default 1 s). */
  pollMs?: number;
  /**
   * Records this process's WEBHOOK_ALLOW_PRIVATE_URLS as the stack's (`recordDeliverySetting`), for the dashboard and
   * the CLI to check URLs by: a management-service's dispatcher does; a test's may not.
   */
  recordSetting?: boolean;
  /** Overrides WEBHOOK_RETRY_SCHEDULE (tests). */
  retryScheduleMs?: number[];
  resolve?: Resolver;
}

export type Outcome = 'succeeded' | 'retrying' | 'failed' | 'disabled';

/** Counts one more (or one less) attempt in flight for `id`; none is no entry. */
function tally(counts: Map<string, number>, id: string, delta: 1 | -1) {
  const n = (counts.get(id) ?? 0) + delta;
  if (n) counts.set(id, n);
  else counts.delete(id);
}

/** The ids with `max` attempts in flight: left out of the next claim. */
const atBound = (counts: Map<string, number>, max: number) => [...counts].filter(([, n]) => n >= max).map(([id]) => id);
const STATS_EVERY_MS = 5_000;
const RETENTION_EVERY_MS = 3_600_000;
const RECORD_RETRY_MS = 500;

/** The dispatcher's state and loop: `start` it once, `stop` it to drain (see the top of this file). */
export class Dispatcher {
  private readonly sql: Sql;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly maxInFlight: number;
  private readonly perEndpointMax: number;
  private readonly perTenantMax: number;
  private readonly perTenantShared: number;
  private readonly pendingBudget: number;
  private readonly pollMs: number;
  private readonly schedule: number[];
  private readonly box: ReturnType<typeof createSecretBox>;
  private readonly sendOptions: Parameters<typeof sendWebhook>[1];
  private readonly counted: ((labels: { outcome: Outcome }) => void) | undefined;
  /** The last figures read (`measuredAt`: when, by this process's clock); the oldest's age grows from there. */
  private readonly stats = { pending: 0, deferredStudios: 0, oldestSeconds: 0, measuredAt: 0 };
  private statsFailedLogged = 0;

  private stopping = false;
  private abandoned = false;
  private running: Promise<void> | null = null;
  private active = 0;
  private readonly perEndpoint = new Map<string, number>();
  /** Attempts in flight per tenant: a studio and its sandboxes together (`Claimed.tenantId`). */
  private readonly perTenant = new Map<string, number>();
  /** The tenant of each endpoint with attempts in flight. */
  private readonly tenantOf = new Map<string, string>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private listener: { unlisten(): Promise<void> } | null = null;
  private listenSuspect = false;
  /** Whether the setting is still to be recorded (the first round that reaches Postgres does it). */
  private settingToRecord: boolean;
  private readonly allowPrivate: boolean;
  private nextDueAt = Number.POSITIVE_INFINITY;

  // one wake-up at a time: a wake while the loop works makes it go round again without sleeping
  private woken = false;
  private sleeper: (() => void) | null = null;
  /**
   * What the next round does. A notification (or the poll) may mean new events: fan out, then claim
   * whatever is free. A finished attempt only frees a slot: claim once a quarter of the slots are
   * free (a claim per finished attempt cost more than the attempts themselves).
   */
  private fanOutDue = true;
  private claimEager = true;
  private readonly minClaim: number;

  // decrypting a secret per attempt would cost more than signing: kept per ciphertext
  private readonly opened = new Map<string, Uint8Array>();

  /**
   * Successes are recorded together: whatever finished while the previous batch was being written
   * goes in the next statement (one round trip for many instead of a transaction each). To four
   * local receivers on the 2-core VM: about 400 deliveries a second with a transaction per success,
   * 900 batched, 2,900 once claims also waited for a quarter of the slots to be free.
   */
  private readonly successes: {
    c: Claimed;
    lease: string;
    r: AttemptResult;
    done: (r: Recorded | null) => void;
  }[] = [];
  private writingSuccesses = false;

  constructor(deps: DispatcherDeps) {
    const { sql, config } = deps;
    this.sql = sql;
    this.timeoutMs = deps.timeoutMs ?? 10_000;
    this.leaseMs = deps.leaseMs ?? this.timeoutMs + 20_000;
    this.maxInFlight = deps.maxInFlight ?? 64;
    this.perEndpointMax = config.WEBHOOK_ENDPOINT_CONCURRENCY;
    // a tenant's endpoints together (a studio's and its sandboxes') hold at most three quarters of the slots: the other
    // tenants always have a quarter; past half, only an endpoint with nothing in flight takes one more (its first), so
    // the endpoints that hang cannot hold all of their tenant's slots and leave its healthy ones none
    this.perTenantMax = Math.max(1, this.maxInFlight - Math.max(1, Math.floor(this.maxInFlight / 4)));
    this.perTenantShared = Math.max(1, Math.floor(this.maxInFlight / 2));
    this.pendingBudget = config.WEBHOOK_PENDING_BUDGET;
    this.pollMs = deps.pollMs ?? 1_000;
    this.schedule = deps.retryScheduleMs ?? parseRetrySchedule(config.WEBHOOK_RETRY_SCHEDULE);
    this.box = createSecretBox(config.WEBHOOK_SECRET_KEY);
    this.sendOptions = {
      timeoutMs: this.timeoutMs,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
      resolve: deps.resolve,
    };
    this.minClaim = Math.max(1, Math.floor(this.maxInFlight / 4));
    this.settingToRecord = deps.recordSetting ?? false;
    this.allowPrivate = config.WEBHOOK_ALLOW_PRIVATE_URLS;

    this.counted = deps.metrics?.counter<'outcome'>(
      'studio_webhook_deliveries_total',
      'Webhook delivery attempts, by what became of the delivery.',
      ['outcome'],
    );
    deps.metrics?.gauge(
      'studio_webhook_pending',
      'Webhook deliveries not yet delivered or given up (all studios).',
      () => this.stats.pending,
    );
    deps.metrics?.gauge(
      'studio_webhook_deferred_studios',
      'Studios (live or sandbox) whose new events wait: their tenant (a studio and its sandboxes) is past its pending-delivery budget (WEBHOOK_PENDING_BUDGET) and its backlog must drain.',
      () => this.stats.deferredStudios,
    );
    deps.metrics?.gauge(
      'studio_webhook_oldest_pending_seconds',
      'How long the oldest undelivered change has waited: a pending delivery, or an event not yet fanned out.',
      // aged at each scrape, so it keeps growing while the figures cannot be read (Postgres away: when it matters most)
      () =>
        this.stats.oldestSeconds > 0
          ? this.stats.oldestSeconds + (Date.now() - this.stats.measuredAt) / 1000
          : this.stats.oldestSeconds,
    );
  }

  start() {
    if (this.running) return;
    this.running = this.loop();
    this.every(STATS_EVERY_MS, 0, () => this.readStats());
    this.every(RETENTION_EVERY_MS, 60_000, async () => {
      const deleted = await deleteExpired(this.sql);
      if (deleted) log('info', 'webhook attempts past retention deleted', { rows: deleted });
    });
  }

  /** Stops claiming, lets attempts in flight finish and be recorded (at most `graceMs`), stops listening. */
  async stop(graceMs = this.timeoutMs + 2_000) {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.wake();
    await this.running;
    await Promise.race([Promise.all([...this.tasks]), Bun.sleep(graceMs)]);
    this.abandoned = true;
    await this.listener?.unlisten().catch(() => {});
  }

  /** Look for work now (tests; the LISTEN and the poll do it otherwise). */
  readonly wake = () => {
    this.woken = true;
    this.sleeper?.();
  };

  get inFlight() {
    return this.active;
  }

  private readonly notified = () => {
    this.fanOutDue = this.claimEager = true;
    this.wake();
  };

  /** Until woken, or `ms` passed (the poll: as good as a notification). */
  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          this.fanOutDue = this.claimEager = true;
          done();
        },
        Math.max(0, ms),
      );
      const done = () => {
        clearTimeout(timer);
        this.sleeper = null;
        resolve();
      };
      this.sleeper = done;
    });
  }

  /** LISTEN on its own connection; after an outage postgres.js may have dropped it, so it is made again. */
  private async ensureListening() {
    if (this.listener && !this.listenSuspect) return;
    await this.listener?.unlisten().catch(() => {});
    this.listener = null;
    this.listener = await this.sql.listen(EVENTS_CHANNEL, this.notified, this.notified);
    this.listenSuspect = false;
  }

  private async secretOf(endpointId: string, ciphertext: Buffer, keyId: string): Promise<Uint8Array> {
    const key = `${endpointId}:${keyId}:${ciphertext.toString('base64')}`;
    let bytes = this.opened.get(key);
    if (!bytes) {
      if (this.opened.size > 4096) this.opened.clear();
      bytes = secretBytes(await this.box.open({ ciphertext, keyId }, endpointId));
      this.opened.set(key, bytes);
    }
    return bytes;
  }

  private async signingKeys(c: Claimed): Promise<Uint8Array[]> {
    const keys = [await this.secretOf(c.endpointId, c.secretCiphertext, c.secretKeyId)];
    if (
      c.previousSecretCiphertext &&
      c.previousSecretKeyId &&
      c.previousSecretUntil &&
      c.previousSecretUntil > new Date()
    ) {
      keys.push(await this.secretOf(c.endpointId, c.previousSecretCiphertext, c.previousSecretKeyId));
    }
    return keys;
  }

  /** Runs a write until Postgres takes it (or the drain gives up on it: the lease then brings the delivery back). */
  private async persist<T>(write: () => Promise<T>): Promise<T | null> {
    for (let tries = 0; ; tries++) {
      try {
        return await write();
      } catch (err) {
        if (this.abandoned) return null;
        if (tries === 0)
          log('warn', 'webhook dispatcher: cannot record an attempt yet; retrying', { error: (err as Error).message });
        this.listenSuspect = true;
        await Bun.sleep(RECORD_RETRY_MS);
      }
    }
  }

  private recordSuccess(c: Claimed, lease: string, r: AttemptResult): Promise<Recorded | null> {
    return new Promise((done) => {
      this.successes.push({ c, lease, r, done });
      if (!this.writingSuccesses) void this.writeSuccesses();
    });
  }

  private async writeSuccesses() {
    this.writingSuccesses = true;
    while (this.successes.length) {
      const batch = this.successes.splice(0, 500);
      const marked = await this.persist(() => recordSuccesses(this.sql, batch));
      for (const b of batch)
        b.done(
          marked ? { status: marked.has(b.c.id) ? 'succeeded' : null, nextAttemptAt: null, disabled: null } : null,
        );
    }
    this.writingSuccesses = false;
  }

  private bodyOf(c: Claimed): string | null {
    if (c.payload !== null)
      return eventBody({ id: c.eventId, type: c.eventType, createdAt: c.createdAt, data: c.payload, requestId: null });
    if (!c.eventFound) return null;
    return eventBody({
      id: c.eventId,
      type: c.eventType,
      createdAt: c.eventCreatedAt!,
      data: c.eventData,
      requestId: c.requestId,
    });
  }

  /** One attempt at `c`: sent, then recorded and logged (or dropped, when there is nothing left to send it to). */
  private async deliver(c: Claimed, lease: string) {
    const body = this.bodyOf(c);
    if (!c.endpointEnabled || body === null) {
      await this.persist(() => failClaim(this.sql, c, lease));
      log('warn', 'webhook delivery dropped', {
        deliveryId: c.id,
        endpointId: c.endpointId,
        eventId: c.eventId,
        reason: body === null ? 'event no longer kept' : 'endpoint disabled',
      });
      return;
    }
    const result = await this.send(c, body);
    const retryIn = retryDelay(this.schedule, c.roundAttempts + 1);
    const recorded: Recorded | null =
      result.ok && !c.failingSince
        ? await this.recordSuccess(c, lease, result)
        : await this.persist(() => recordAttempt(this.sql, c, lease, result, retryIn));
    const outcome: Outcome = result.ok
      ? 'succeeded'
      : recorded?.disabled
        ? 'disabled'
        : recorded?.status === 'failed'
          ? 'failed'
          : 'retrying';
    this.counted?.({ outcome });
    if (recorded?.nextAttemptAt) this.nextDueAt = Math.min(this.nextDueAt, recorded.nextAttemptAt.getTime());
    log(outcome === 'succeeded' || outcome === 'retrying' ? 'info' : 'warn', 'webhook attempt', {
      deliveryId: c.id,
      endpointId: c.endpointId,
      studioId: c.studioId,
      eventId: c.eventId,
      eventType: c.eventType,
      traceId: c.traceId,
      attempt: c.roundAttempts + 1,
      status: result.statusCode,
      durationMs: result.durationMs,
      outcome,
      error: result.error,
      nextAttemptAt: recorded?.nextAttemptAt?.toISOString() ?? null,
      disabledReason: recorded?.disabled ?? undefined,
    });
  }

  private async send(c: Claimed, body: string): Promise<AttemptResult> {
    try {
      return await sendWebhook(
        { url: c.url, eventId: c.eventId, body, secrets: await this.signingKeys(c) },
        this.sendOptions,
      );
    } catch (err) {
      // a secret that no configured key opens: an operator's mistake, recorded and retried like any failure
      return {
        ok: false,
        gone: false,
        statusCode: null,
        durationMs: 0,
        response: null,
        error: `not sent: ${(err as Error).message}`,
      };
    }
  }

  private startAttempt(c: Claimed, lease: string) {
    this.active++;
    tally(this.perEndpoint, c.endpointId, 1);
    tally(this.perTenant, c.tenantId, 1);
    this.tenantOf.set(c.endpointId, c.tenantId);
    const task = this.deliver(c, lease)
      .catch((err) =>
        log('error', 'webhook delivery failed unexpectedly', {
          deliveryId: c.id,
          error: (err as Error)?.stack ?? String(err),
        }),
      )
      .finally(() => {
        this.active--;
        tally(this.perEndpoint, c.endpointId, -1);
        tally(this.perTenant, c.tenantId, -1);
        if (!this.perEndpoint.has(c.endpointId)) this.tenantOf.delete(c.endpointId);
        this.tasks.delete(task);
        this.wake();
      });
    this.tasks.add(task);
  }

  /**
   * Whether one more attempt to the endpoint may start: its own bound, its tenant's (a studio and its sandboxes: three
   * quarters of the slots), and past half of the slots only the first of an endpoint.
   */
  private mayTake(endpointId: string, tenantId: string): boolean {
    const endpoint = this.perEndpoint.get(endpointId) ?? 0;
    const tenant = this.perTenant.get(tenantId) ?? 0;
    return (
      endpoint < this.perEndpointMax && tenant < this.perTenantMax && (endpoint === 0 || tenant < this.perTenantShared)
    );
  }

  /** Claims what this process has room for; true when it started any and has room left (more may be due). */
  private async claimAndStart(eager: boolean): Promise<boolean> {
    const free = this.maxInFlight - this.active;
    if (free <= 0 || (!eager && this.active > 0 && free < this.minClaim)) return false; // a finishing attempt wakes the loop
    const busy = [...this.perEndpoint.keys()].filter((id) => !this.mayTake(id, this.tenantOf.get(id)!));
    const busyTenants = atBound(this.perTenant, this.perTenantMax);
    const lease = crypto.randomUUID();
    const claimed = await claimDue(this.sql, {
      limit: free,
      perEndpoint: this.perEndpointMax,
      busy,
      busyTenants,
      lease,
      leaseMs: this.leaseMs,
    });
    const excess: Claimed[] = [];
    for (const c of claimed) {
      if (this.mayTake(c.endpointId, c.tenantId)) this.startAttempt(c, lease);
      else excess.push(c);
    }
    // more of one endpoint's (or tenant's) deliveries than its bound allows: back in the queue, due at once
    if (excess.length) await releaseClaims(this.sql, excess, lease);
    // a claim shares its slots among the pairs with due deliveries: while slots are free, the next one takes more
    return excess.length < claimed.length && this.active < this.maxInFlight;
  }

  /**
   * Expands the events past the cursor into deliveries, a batch at a time, then one transaction of the deferred
   * studios' turns (the claim and the cursor's new events go between two): `more` when that did anything.
   */
  private async fanOut(): Promise<{ failed: unknown; more: boolean }> {
    this.fanOutDue = false;
    try {
      while (!this.stopping && (await fanOutBatch(this.sql, this.pendingBudget)) > 0);
      const more = !this.stopping && (await catchUpDeferred(this.sql, this.pendingBudget)) > 0;
      return { failed: null, more };
    } catch (err) {
      return { failed: err, more: false };
    }
  }

  private async loop() {
    let failing = false;
    while (!this.stopping) {
      this.woken = false;
      let more = false;
      let turnsLeft = false;
      try {
        await this.ensureListening();
        if (this.settingToRecord) {
          await recordDeliverySetting(this.sql, this.allowPrivate);
          this.settingToRecord = false;
        }
        // a fan-out that fails is tried again next round; the deliveries already made are claimed meanwhile
        const fanned = this.fanOutDue ? await this.fanOut() : { failed: null, more: false };
        const eager = this.claimEager;
        this.claimEager = false;
        if (!this.stopping) more = await this.claimAndStart(eager);
        if (fanned.failed) throw fanned.failed;
        // deferred events still to take their turns: the next round fans out again at once (and claims as slots free)
        if (fanned.more) turnsLeft = this.fanOutDue = true;
        if (failing) log('info', 'webhook dispatcher: its rounds work again');
        failing = false;
      } catch (err) {
        if (!failing)
          log(
            'warn',
            'webhook dispatcher: a round failed (Postgres away, or a statement refused); trying again every poll',
            {
              error: (err as Error).message,
            },
          );
        failing = true;
        this.listenSuspect = this.fanOutDue = this.claimEager = true;
      }
      if (this.nextDueAt <= Date.now()) {
        this.nextDueAt = Number.POSITIVE_INFINITY;
        this.claimEager = true; // a retry fell due
      }
      if (more) this.claimEager = true;
      else if (!turnsLeft) await this.sleep(Math.min(this.pollMs, this.nextDueAt - Date.now()));
    }
  }

  /** The gauges' figures; a failure keeps the last ones (the oldest's age still grows) and is said once a minute. */
  private async readStats() {
    try {
      Object.assign(this.stats, await pendingStats(this.sql), { measuredAt: Date.now() });
    } catch (err) {
      if (Date.now() - this.statsFailedLogged < 60_000) return;
      this.statsFailedLogged = Date.now();
      log('warn', 'webhook figures could not be read; the gauges keep the last ones', { error: String(err) });
    }
  }

  /** `fn` every `ms` (the first after `firstMs`), one run at a time, until the stop. */
  private every(ms: number, firstMs: number, fn: () => Promise<unknown>) {
    const schedule = (delay: number) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.stopping)
          fn()
            .catch(() => {})
            .finally(() => this.stopping || schedule(ms));
      }, delay);
      this.timers.add(timer);
    };
    schedule(firstMs);
  }
}

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  return new Dispatcher(deps);
}

/** The production dispatcher of a management-service process: the defaults of docs/design/webhooks.md, started at once. */
export function startWebhookDispatcher(deps: Pick<DispatcherDeps, 'sql' | 'config' | 'metrics'>): Dispatcher {
  const dispatcher = createDispatcher({ ...deps, recordSetting: true });
  dispatcher.start();
  return dispatcher;
}
