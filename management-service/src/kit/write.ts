import type { Static } from '@sinclair/typebox';
import type { EventType } from '@studio/shared';
import {
  type AnyOperation,
  AppError,
  type Caller,
  EMPTY_SHA256,
  GW,
  isWriteMethod,
  JSON_TYPE,
  PROBLEM_CONTENT_TYPE,
  parseTraceparent,
  problemBody,
  problemTypeBase,
  TRACEPARENT,
  translatePgError,
} from '@studio/shared';
import type { Metrics, OperationContext, Tx } from '@studio/shared/io';
import { type EarlyRefusal, verifiedCaller } from '@studio/shared/io';
import { doubleBookedWithConflict } from './conflicts';
import type { ManagementDeps } from './deps';
import { type Emitted, insertEvents, type Written } from './events';
import { idempotencyKeyOf, readKeyOf } from './guard';
import {
  findRecord,
  fingerprintOf,
  fingerprintOfBytes,
  idempotencyLocks,
  insertRecord,
  type LiveRecord,
  type StoredResponse,
  sweepExpired,
  tryKeyLock,
} from './idempotency';
import { locationOf } from './location';

/** The record a write answers with: its registry row's success schema. */
export type WriteAnswer<O extends AnyOperation> = Static<O['ok']['schema']>;
/** The event types a write's registry row declares (`emits`). */
export type EmitsOf<O extends AnyOperation> = O extends { emits: readonly (infer T extends EventType)[] } ? T : never;
/** What a write's action returns: its record, and the events of its change, of the types its row declares. */
export type WriteResult<O extends AnyOperation> = Written<WriteAnswer<O>, EmitsOf<O>>;

type IdempotencyOutcome = 'new' | 'replayed' | 'reused_key' | 'in_progress' | 'refused';
interface WriteCounters {
  outcome: (labels: { outcome: IdempotencyOutcome }) => void;
  events: (labels: { type: string }) => void;
}
const writeCountersOf = new WeakMap<Metrics, WriteCounters>();
/**
 * `studio_idempotency_outcomes_total{outcome}` and `studio_events_recorded_total{type}`, defined once per registry:
 * by the app as it is built (`createManagementService`), so `/metrics` names them before the first write.
 */
export function writeCounters(metrics: Metrics): WriteCounters {
  let c = writeCountersOf.get(metrics);
  if (!c) {
    c = {
      outcome: metrics.counter(
        'studio_idempotency_outcomes_total',
        'Management writes by idempotency outcome: new, replayed, reused_key (another request), in_progress, refused (a business error, stored).',
        ['outcome'],
      ),
      events: metrics.counter(
        'studio_events_recorded_total',
        'Events recorded by committed Management writes, by type (docs/design/events.md).',
        ['type'],
      ),
    };
    writeCountersOf.set(metrics, c);
  }
  return c;
}

function counted(deps: ManagementDeps, outcome: IdempotencyOutcome) {
  if (deps.metrics) writeCounters(deps.metrics).outcome({ outcome });
}

/** Counted after the commit. */
function countEvents(deps: ManagementDeps, types: readonly EventType[]) {
  if (!deps.metrics) return;
  const inc = writeCounters(deps.metrics).events;
  for (const type of types) inc({ type });
}

/** An action may record only the types its registry row declares: anything else is a bug, refused (500) before it commits. */
function declared(o: AnyOperation, events: readonly Emitted[]): EventType[] {
  const allowed: readonly string[] = 'emits' in o ? o.emits : [];
  const types = events.map((e) => e.type);
  const stray = types.find((t) => !allowed.includes(t));
  if (stray)
    throw new Error(
      `${o.id} emitted ${stray}, which its registry row does not declare (emits: ${allowed.join(', ') || 'none'})`,
    );
  return types;
}

/**
 * Test hook: runs right after the action and its record commit, before the reply
 * (and before the Redis hot copy and lock release). A test makes it throw to act out
 * a process killed between commit and reply.
 */
export const writeHooks: { afterCommit?: (info: { studioId: string; key: string }) => void } = {};

const inProgress = () =>
  new AppError('idempotency_request_in_progress', {
    detail: 'A request with this Idempotency-Key is still running; retry shortly.',
    headers: { 'retry-after': '1' },
  });

function respond(rec: StoredResponse, replayed: boolean): Response {
  const headers = new Headers(rec.headers);
  if (replayed) headers.set('idempotent-replayed', 'true');
  return new Response(rec.body, { status: rec.status, headers });
}

function replay(deps: ManagementDeps, rec: StoredResponse, fingerprint: string): Response {
  if (rec.fingerprint !== fingerprint) {
    counted(deps, 'reused_key');
    throw new AppError('idempotency_key_reused', {
      detail: 'This Idempotency-Key was already used for a different request (method, path or body).',
    });
  }
  counted(deps, 'replayed');
  return respond(rec, true);
}

/** The registry row's success status, and for a create (201) the `Location` of the new record. */
function storedSuccess<O extends AnyOperation>(
  fingerprint: string,
  c: OperationContext<O>,
  record: WriteAnswer<O>,
): StoredResponse {
  const status = c.operation.ok.status;
  const headers: Record<string, string> = { 'content-type': JSON_TYPE };
  if (status === 201) headers.location = locationOf(c.operation, c.params, (record as { id: string }).id);
  return { fingerprint, status, headers, body: JSON.stringify(record) };
}

function storedProblem(fingerprint: string, err: AppError, requestId: string, typeBase: string): StoredResponse {
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE, ...err.options.headers };
  return {
    fingerprint,
    status: err.status,
    headers,
    body: JSON.stringify(problemBody(err.code, requestId, { typeBase, ...err.options })),
  };
}

type Outcome =
  | { kind: 'busy' }
  | { kind: 'existing'; rec: LiveRecord }
  | { kind: 'done'; rec: StoredResponse; types: EventType[] }
  | { kind: 'refused'; rec: StoredResponse };

/** Another request holds the key's lock. It may have committed and died before releasing: the record is the truth. */
async function answerWhileLocked(
  deps: ManagementDeps,
  studioId: string,
  key: string,
  fingerprint: string,
): Promise<Response> {
  const rec = await findRecord(deps.sql, studioId, key);
  if (!rec) {
    counted(deps, 'in_progress');
    throw inProgress();
  }
  await idempotencyLocks(deps).cache(studioId, key, rec, rec.ttlS);
  return replay(deps, rec, fingerprint);
}

/** What a write does inside its transaction once it holds its key: its change, and the answer to store. */
type Act = (tx: Tx) => Promise<{ rec: StoredResponse; types: EventType[] }>;

/** Whose write it is and what answers its failure (`failureOf`). */
interface WriteOf {
  deps: ManagementDeps;
  caller: Caller;
  key: string;
  fingerprint: string;
}

/**
 * A business error (4xx but 429) as the key's answer, to store; null for anything else (5xx, 429, a crash), which
 * is not stored, so a retry really retries. `tx` is the write's transaction, rolled back to before the act.
 */
async function failureOf(tx: Tx, w: WriteOf, err: unknown): Promise<StoredResponse | null> {
  let failure = err instanceof AppError ? err : translatePgError(err);
  if (!failure || failure.status >= 500 || failure.status === 429) return null;
  // a double-booking names the occurrence it clashes with (stored with the answer, so a replay names it too)
  if (failure.code === 'instructor_double_booked')
    failure = (await doubleBookedWithConflict(tx, w.caller.studioId, err).catch(() => null)) ?? failure;
  return storedProblem(w.fingerprint, failure, w.caller.requestId, problemTypeBase(w.deps.config, 'management'));
}

/**
 * The write's transaction: the studio-and-key advisory lock, the stored answer if one exists,
 * else the act (the action, its declared events and the answer it stores), all or nothing. An act
 * refused with a business error is undone to its savepoint and its problem stored in the same
 * transaction, while the lock is held: stored in a second one, another request with the key could
 * act in between (the lock is the transaction's), as it could in single-node mode or with Redis down.
 */
async function commitWrite(tx: Tx, w: WriteOf, act: Act): Promise<Outcome> {
  const studioId = w.caller.studioId;
  if (!(await tryKeyLock(tx, studioId, w.key))) return { kind: 'busy' };
  const existing = await findRecord(tx, studioId, w.key);
  if (existing) return { kind: 'existing', rec: existing };
  try {
    return { kind: 'done', ...(await tx.savepoint((sp) => act(sp))) };
  } catch (err) {
    // postgres.js has rolled back to the savepoint (a failed query outside one fails the whole transaction)
    const refused = await failureOf(tx, w, err);
    if (!refused) throw err;
    await insertRecord(tx, studioId, w.key, refused);
    return { kind: 'refused', rec: refused };
  }
}

/** A handler's action as an `Act`: its record and events, stored as the registry row's success answer. */
function actOf<O extends AnyOperation>(
  c: OperationContext<O>,
  key: string,
  fingerprint: string,
  action: (tx: Tx) => Promise<WriteResult<O>>,
): Act {
  const { caller, request } = c;
  return async (tx) => {
    const { record, events } = await action(tx);
    const types = declared(c.operation, events);
    await insertEvents(tx, caller.studioId, events, {
      requestId: caller.requestId,
      traceId: parseTraceparent(request.headers.get(TRACEPARENT))?.traceId ?? null,
    });
    const rec = storedSuccess(fingerprint, c, record);
    await insertRecord(tx, caller.studioId, key, rec);
    return { rec, types };
  };
}

/**
 * Runs a Management write (POST/PATCH/DELETE) under the idempotency rules of docs/design/idempotency.md.
 * `action` runs inside one Postgres transaction and returns the record the operation
 * answers with and the events of its change (`kit/events.ts`; none when nothing changed);
 * the events (their types checked against the registry row's `emits`) and the answer (the
 * registry row's status, and a create's `Location`) are stored in that same transaction, so a
 * committed change always has its events and a rolled-back, refused or replayed one has none.
 * Throw AppError (or let a constraint violation escape) to fail it. Business errors (4xx) are stored too, in the same transaction (the act undone to a savepoint); 5xx and 429
 * are not, so a retry really retries. Redis holds the in-flight lock and a hot copy
 * (`IdempotencyLocks`); in single-node mode, or while Redis is down, the transaction-scoped
 * advisory lock alone keeps the same guarantees. Usage in a
 * resource's handlers (`write = writerOf(deps)`):
 *
 *   managementCreatePlan: (c) => write(c, (tx) => svc.createPlan(tx, c.caller.studioId, c.body)),
 *   // createPlan returns { record: plan, events: [event('plan.created', plan)] }
 *
 * The fingerprint is method + path + the validated body as canonical JSON (keys sorted;
 * undefined for a body-less DELETE / POST). Cached Storefront answers need no call here:
 * the gateway drops them after a successful write that changes what they show.
 */
export function runWrite<O extends AnyOperation>(
  deps: ManagementDeps,
  c: OperationContext<O>,
  action: (tx: Tx) => Promise<WriteResult<O>>,
): Promise<Response> {
  const key = idempotencyKeyOf(c.request);
  const fingerprint = fingerprintOf(c.request.method, new URL(c.request.url).pathname, c.body);
  return underKey({ deps, caller: c.caller, key, fingerprint }, actOf(c, key, fingerprint, action));
}

/**
 * A write refused before its handler ran (the service kit's `EarlyRefusal`: not JSON, not of its schema, not of a
 * JSON media type) is a first answer like any other: stored under its key, so the same request is answered the
 * same again and another one with that key is 409 `idempotency_key_reused` (the specification's rule 5). Its
 * fingerprint is of its parsed body, as a write's is, or, when it has none, of the SHA-256 of its bytes the
 * gateway signed. null for a request the guard took no key from (no write, or the key's own 400).
 */
export function refusedWrite(deps: ManagementDeps) {
  return async ({ request, failure, body }: EarlyRefusal): Promise<Response | null> => {
    const key = isWriteMethod(request.method) ? readKeyOf(request) : undefined;
    if (key === undefined) return null;
    const path = new URL(request.url).pathname;
    const fingerprint = body
      ? fingerprintOf(request.method, path, body.value)
      : fingerprintOfBytes(request.method, path, request.headers.get(GW.bodySha256) ?? EMPTY_SHA256);
    return underKey({ deps, caller: verifiedCaller(request), key, fingerprint }, () => Promise.reject(failure));
  };
}

/** The idempotency rules around one act: the hot copy, the key's lock, the transaction, a failure stored or not. */
async function underKey(w: WriteOf, act: Act): Promise<Response> {
  const { deps, caller, key, fingerprint } = w;
  const { sql } = deps;
  const studioId = caller.studioId;
  const locks = idempotencyLocks(deps); // Redis, or Postgres alone in single-node mode
  const hot = await locks.cached(studioId, key);
  if (hot) return replay(deps, hot, fingerprint);

  const token = crypto.randomUUID();
  const lock = await locks.take(studioId, key, token);
  if (lock === 'busy') return answerWhileLocked(deps, studioId, key, fingerprint);
  const release = () => locks.release(studioId, key, token);

  let outcome: Outcome;
  try {
    outcome = await sql.begin((tx) => commitWrite(tx, w, act));
  } catch (err) {
    await release();
    throw err;
  }
  if (outcome.kind === 'refused') {
    await locks.cache(studioId, key, outcome.rec);
    await release();
    counted(deps, 'refused');
    return respond(outcome.rec, false);
  }

  if (outcome.kind === 'busy') {
    await release();
    counted(deps, 'in_progress');
    throw inProgress();
  }
  if (outcome.kind === 'existing') {
    await locks.cache(studioId, key, outcome.rec, outcome.rec.ttlS);
    await release();
    return replay(deps, outcome.rec, fingerprint);
  }
  countEvents(deps, outcome.types);
  writeHooks.afterCommit?.({ studioId, key });
  await locks.cache(studioId, key, outcome.rec);
  await release();
  if (Math.random() < 0.01) sweepExpired(sql);
  counted(deps, 'new');
  return respond(outcome.rec, false);
}
