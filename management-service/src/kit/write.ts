import { AppError, JSON_TYPE, problemBody, problemTypeBase, PROBLEM_CONTENT_TYPE, type Caller, type Config } from '@studio/shared';
import { translatePgError } from '@studio/shared/pg-errors';
import { doubleBookedWithConflict } from './conflicts';
import type { Sql, Tx } from '@studio/shared/db';
import type { Redis } from '@studio/shared/redis';
import type { Metrics } from '@studio/shared/metrics';
import {
  cachedRecord, cacheRecord, findRecord, fingerprintOf, insertRecord, MAX_KEY_LENGTH, releaseLock, RETENTION_S,
  sweepExpired, takeLock, tryKeyLock, type StoredResponse,
} from './idempotency';

/** What a write action returns; the kit turns it into the HTTP response (and stores it for replay). */
export interface WriteResult {
  status: number;
  body: unknown;
  /** Sent as the `Location` header (successful creates). */
  location?: string;
}

export interface WriteDeps {
  config: Config;
  sql: Sql;
  redis: Redis | null;
  metrics?: Metrics;
}

type IdempotencyOutcome = 'new' | 'replayed' | 'reused_key' | 'in_progress' | 'refused';
/** `studio_idempotency_outcomes_total{outcome}`, defined once per registry. */
const outcomeCounters = new WeakMap<Metrics, (labels: { outcome: IdempotencyOutcome }) => void>();
function counted(deps: WriteDeps, outcome: IdempotencyOutcome) {
  if (!deps.metrics) return;
  let inc = outcomeCounters.get(deps.metrics);
  if (!inc) {
    inc = deps.metrics.counter('studio_idempotency_outcomes_total', 'Management writes by idempotency outcome: new, replayed, reused_key (another request), in_progress, refused (a business error, stored).', ['outcome']);
    outcomeCounters.set(deps.metrics, inc);
  }
  inc({ outcome });
}

/**
 * Test hook: runs right after the action and its record commit, before the reply
 * (and before the Redis hot copy and lock release). A test makes it throw to act out
 * a process killed between commit and reply.
 */
export const writeHooks: { afterCommit?: (info: { studioId: string; key: string }) => void } = {};

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The request's Idempotency-Key, or the 400 of contract §4. */
export function idempotencyKeyOf(request: Request): string {
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key === null) throw new AppError('idempotency_key_required', { detail: 'Send an Idempotency-Key header (a fresh value per action) on every Management write.' });
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw new AppError('idempotency_key_invalid', { detail: `Idempotency-Key must be 1..${MAX_KEY_LENGTH} characters.` });
  return key;
}

const inProgress = () => new AppError('idempotency_request_in_progress', {
  detail: 'A request with this Idempotency-Key is still running; retry shortly.',
  headers: { 'retry-after': '1' },
});

function respond(rec: StoredResponse, replayed: boolean): Response {
  const headers = new Headers(rec.headers);
  if (replayed) headers.set('idempotent-replayed', 'true');
  return new Response(rec.body, { status: rec.status, headers });
}

function replay(deps: WriteDeps, rec: StoredResponse, fingerprint: string): Response {
  if (rec.fingerprint !== fingerprint) {
    counted(deps, 'reused_key');
    throw new AppError('idempotency_key_reused', { detail: 'This Idempotency-Key was already used for a different request (method, path or body).' });
  }
  counted(deps, 'replayed');
  return respond(rec, true);
}

function storedSuccess(fingerprint: string, r: WriteResult): StoredResponse {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE };
  if (r.location) headers.location = r.location;
  return { fingerprint, status: r.status, headers, body: JSON.stringify(r.body) };
}

function storedProblem(fingerprint: string, err: AppError, requestId: string, typeBase: string): StoredResponse {
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE, ...err.options.headers };
  return { fingerprint, status: err.status, headers, body: JSON.stringify(problemBody(err.code, requestId, { typeBase, ...err.options })) };
}

type Outcome = { kind: 'busy' } | { kind: 'existing'; rec: StoredResponse & { ttlS: number } } | { kind: 'done'; rec: StoredResponse };

/** Another request holds the key's lock. It may have committed and died before releasing: the record is the truth. */
async function answerWhileLocked(deps: WriteDeps, studioId: string, key: string, fingerprint: string): Promise<Response> {
  const rec = await findRecord(deps.sql, studioId, key);
  if (!rec) {
    counted(deps, 'in_progress');
    throw inProgress();
  }
  await cacheRecord(deps.redis, deps.config.REDIS_PREFIX, studioId, key, rec, rec.ttlS);
  return replay(deps, rec, fingerprint);
}

/**
 * A write that failed: a business error (4xx but 429) is stored as the key's answer, in
 * its own transaction, so a retry replays it; anything else (5xx, 429, a crash) is not
 * stored (null), so a retry really retries.
 */
async function storeFailure(deps: WriteDeps, caller: Caller, key: string, fingerprint: string, err: unknown): Promise<StoredResponse | null> {
  const { sql, redis, config } = deps;
  const studioId = caller.studioId;
  let failure = err instanceof AppError ? err : translatePgError(err);
  // a double-booking names the occurrence it clashes with (stored with the answer, so a replay names it too)
  if (failure?.code === 'instructor_double_booked') failure = (await doubleBookedWithConflict(sql, studioId, err).catch(() => null)) ?? failure;
  if (!failure || failure.status >= 500 || failure.status === 429) return null;
  const rec = storedProblem(fingerprint, failure, caller.requestId, problemTypeBase(config, 'management'));
  const stored = await sql.begin(async (tx) => {
    if (!(await tryKeyLock(tx, studioId, key))) return false;
    if (await findRecord(tx, studioId, key)) return false;
    await insertRecord(tx, studioId, key, rec);
    return true;
  }).catch(() => false);
  if (stored) await cacheRecord(redis, config.REDIS_PREFIX, studioId, key, rec);
  return rec;
}

/**
 * Runs a Management write (POST/PATCH/DELETE) under the idempotency rules of contract §5.
 * `action` runs inside one Postgres transaction, and the stored response commits in that
 * same transaction; throw AppError (or let a constraint violation escape) to fail it.
 * Business errors (4xx) are stored too, in their own transaction; 5xx and 429 are not,
 * so a retry really retries. Redis holds the in-flight lock and a hot copy; without
 * Redis a transaction-scoped advisory lock keeps the same guarantees. Usage in a route:
 *
 *   .post('/v1/plans', ({ caller, request, body }) =>
 *     runWrite(deps, caller, request, body, (tx) => createPlan(tx, caller.studioId, body)),
 *     { body: CreatePlanBody })
 *
 * The fingerprint is method + path + `body` as canonical JSON (keys sorted): pass the
 * validated body as received (or undefined for a body-less DELETE / POST). Cached
 * Storefront answers need no call here: the gateway drops them on every successful write.
 */
export async function runWrite(
  deps: WriteDeps, caller: Caller, request: Request, body: unknown,
  action: (tx: Tx) => Promise<WriteResult>,
): Promise<Response> {
  const { sql, redis, config } = deps;
  const prefix = config.REDIS_PREFIX;
  const studioId = caller.studioId;
  const key = idempotencyKeyOf(request);
  const fingerprint = fingerprintOf(request.method, new URL(request.url).pathname, body);

  const hot = await cachedRecord(redis, prefix, studioId, key);
  if (hot) return replay(deps, hot, fingerprint);

  const token = crypto.randomUUID();
  const lock = await takeLock(redis, prefix, studioId, key, token);
  if (lock === 'busy') return answerWhileLocked(deps, studioId, key, fingerprint);
  const release = () => releaseLock(redis, prefix, studioId, key, token);

  let outcome: Outcome;
  try {
    outcome = await sql.begin(async (tx): Promise<Outcome> => {
      if (!(await tryKeyLock(tx, studioId, key))) return { kind: 'busy' };
      const existing = await findRecord(tx, studioId, key);
      if (existing) return { kind: 'existing', rec: existing };
      const rec = storedSuccess(fingerprint, await action(tx));
      await insertRecord(tx, studioId, key, rec);
      return { kind: 'done', rec };
    });
  } catch (err) {
    const stored = await storeFailure(deps, caller, key, fingerprint, err);
    await release();
    if (!stored) throw err;
    counted(deps, 'refused');
    return respond(stored, false);
  }

  if (outcome.kind === 'busy') {
    await release();
    counted(deps, 'in_progress');
    throw inProgress();
  }
  if (outcome.kind === 'existing') {
    await cacheRecord(redis, prefix, studioId, key, outcome.rec, outcome.rec.ttlS);
    await release();
    return replay(deps, outcome.rec, fingerprint);
  }
  writeHooks.afterCommit?.({ studioId, key });
  await cacheRecord(redis, prefix, studioId, key, outcome.rec, RETENTION_S);
  await release();
  if (Math.random() < 0.01) sweepExpired(sql);
  counted(deps, 'new');
  return respond(outcome.rec, false);
}
