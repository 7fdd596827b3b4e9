/**
 * The Activity page's reads (docs/design/gateway.md, "Activity entry"): a page of entries in rounds of batches, one
 * entry by its request id, the studio's keys for the filter; each query as the page sends it, so that
 * `bun run bench activity-plan` explains what the page sends (`@studio/dashboard/tooling`).
 */
import { MAX_INSTANT_MS, requestTimeOf } from '@studio/shared';
import type { Db, Sql } from '@studio/shared/io';

export const PAGE_SIZE = 50;
/** Filter value for entries with no operation (an unknown route). */
export const UNKNOWN_OP = 'unknown';

/** The page's filters, as read from its query string (`readFilters`). */
export interface Filters {
  key: string;
  operation: string;
  outcome: string;
  /** UTC dates, inclusive. */
  from: string;
  to: string;
  /** The last entry of the previous page as `{at in µs since the epoch}.{id}`, its place in the log's key. */
  after: string;
}

export interface ActivityRow {
  id: string;
  at: Date;
  /** `at` to the microsecond (a Date holds milliseconds), for the next page's cursor. */
  atUs: string;
  operationId: string | null;
  method: string;
  path: string;
  query: string | null;
  status: number;
  outcome: string;
  durationMs: number;
  requestId: string;
  problemCode: string | null;
  problemDetail: string | null;
  traceId: string | null;
  clientAddress: string | null;
  userAgent: string | null;
  /** A folded 429: the calls of this key and address refused in that second. */
  refusedCount: number | null;
  keyName: string | null;
  keyHint: string | null;
  keyKind: 'secret' | 'publishable' | null;
}

/** The end of a `to` day: the next midnight, or the last instant the log can hold. */
export const endOfDay = (day: string) =>
  new Date(Math.min(Date.parse(`${day}T00:00:00Z`) + 86_400_000, MAX_INSTANT_MS));

/** An entry's outcome, from its status (as the gateway sets it; the log keeps the status only). */
const OUTCOME_OF = (sql: Db) =>
  sql`case when e.status >= 500 then 'server_error' when e.status >= 400 then 'client_error' else 'success' end`;
const OUTCOME_IS: Record<string, (sql: Db) => ReturnType<Db>> = {
  success: (sql) => sql`e.status < 400`,
  client_error: (sql) => sql`e.status >= 400 and e.status < 500`,
  server_error: (sql) => sql`e.status >= 500`,
};

/**
 * The entries of a batch `b` of `activity_batches` (migration 00017), one row `e` each; `e.n` is its place in the
 * batch, from 1. An entry's id is its batch's id times 100,000 plus its place from 0, as in the `activity` view.
 */
const ENTRIES = (sql: Db) => sql`unnest(b.at, b.operation_id, b.method, b.path, b.status, b.duration_ms, b.request_id,
    b.problem_code, b.trace_id, b.query, b.problem_detail, b.client_address, b.user_agent, b.refused_count)
  with ordinality as e(at, operation_id, method, path, status, duration_ms, request_id, problem_code, trace_id, query,
    problem_detail, client_address, user_agent, refused_count, n)`;

/** The page's columns of an entry `e` of a batch `b`. */
const ENTRY_COLUMNS = (sql: Db) => sql`
  (b.id * 100000 + e.n - 1)::text as id, e.at, (extract(epoch from e.at) * 1000000)::bigint::text as at_us, e.operation_id, e.method, e.path, e.query, e.status, ${OUTCOME_OF(sql)} as outcome, e.duration_ms, e.request_id,
  e.problem_code, e.problem_detail, e.trace_id, e.client_address, e.user_agent, e.refused_count`;
/** Its key's (KEY_JOIN). */
const KEY_COLUMNS = (sql: Db) => sql`k.name as key_name, k.hint as key_hint, k.kind as key_kind`;
/** The key `k` of the rows `of` (a batch, or a round's entries), which carry its `studio_id` and `key_id`. */
const KEY_JOIN = (sql: Db, of: 'b' | 'e') =>
  sql`left join api_keys k on k.id = ${sql(of)}.key_id and k.studio_id = ${sql(of)}.studio_id`;
/** `{µs since the epoch}` as a timestamptz, to the microsecond (a Date holds milliseconds). */
const instantOf = (sql: Db, us: string) => sql`(timestamptz 'epoch' + ${us}::bigint * interval '1 microsecond')`;

/** The last batch a page has read, newest first: the next round reads the batches after it. */
export interface Frontier {
  /** Its `last_at` in µs since the epoch. */
  lastUs: string;
  id: string;
}
/** A round's row: the round's batches (how many, the last), and one of its entries, unless none passed the filters. */
export type RoundRow = Partial<ActivityRow> & { read: number; lastId: string | null; lastUs: string | null };

/**
 * One round of a page: the next `batches` batches of the studio (or of its key) newest `last_at` first, after
 * `frontier`; of their entries that pass the filters, the newest PAGE_SIZE + 1. Every row says how many batches the
 * round read and which was last (one row without an entry when none passed). A batch that cannot hold an entry of the
 * page is not read: one whose newest entry is before `from`, whose oldest is past `to` or after the cursor (said of
 * its newest too, a minute later, so that the index finds where to start). The query itself, so
 * `bun run bench activity-plan` explains what the page sends.
 */
export function pageRoundQuery(sql: Db, studioId: string, f: Filters, frontier: Frontier | null, batches: number) {
  const [afterUs, afterId] = f.after.split('.');
  const from = f.from && new Date(`${f.from}T00:00:00Z`);
  return sql<RoundRow[]>`
    with b as materialized (
      select * from activity_batches b
      where b.studio_id = ${studioId}
        ${f.key ? sql`and b.key_id = ${f.key}` : sql``}
        ${from ? sql`and b.last_at >= ${from}` : sql``}
        ${f.to ? sql`and b.first_at < ${endOfDay(f.to)} and b.last_at < ${endOfDay(f.to)}::timestamptz + interval '1 minute'` : sql``}
        ${f.after ? sql`and b.first_at <= ${instantOf(sql, afterUs!)} and b.last_at < ${instantOf(sql, afterUs!)} + interval '1 minute'` : sql``}
        ${frontier ? sql`and (b.last_at, b.id) < (${instantOf(sql, frontier.lastUs)}, ${frontier.id}::bigint)` : sql``}
      order by b.last_at desc, b.id desc
      limit ${batches})
    select r.read, r.last_id, r.last_us, e.*, ${KEY_COLUMNS(sql)}
    from (select count(*)::int as read, (array_agg(b.id::text order by b.last_at, b.id))[1] as last_id,
                 (array_agg((extract(epoch from b.last_at) * 1000000)::bigint::text order by b.last_at, b.id))[1] as last_us
          from b) r
    left join lateral (
      select b.studio_id, b.key_id, ${ENTRY_COLUMNS(sql)}
      from b cross join lateral ${ENTRIES(sql)}
      where true
        ${f.operation === UNKNOWN_OP ? sql`and e.operation_id is null` : f.operation ? sql`and e.operation_id = ${f.operation}` : sql``}
        ${f.outcome ? sql`and ${OUTCOME_IS[f.outcome]!(sql)}` : sql``}
        ${from ? sql`and e.at >= ${from}` : sql``}
        ${f.to ? sql`and e.at < ${endOfDay(f.to)}` : sql``}
        ${f.after ? sql`and (e.at, b.id * 100000 + e.n - 1) < (${instantOf(sql, afterUs!)}, ${afterId!}::bigint)` : sql``}
      order by e.at desc, b.id * 100000 + e.n - 1 desc
      limit ${PAGE_SIZE + 1}
    ) e on true
    ${KEY_JOIN(sql, 'e')}`;
}

/**
 * The entry of a request id: at the millisecond its id names, in the studio's batches whose newest entry is within the
 * minute after it (a batch spans less than a minute: migration 00017). An id made before ids carried the time, in the
 * batches that begin with such an id, through their own index (`activity_batches_untimed_request`). The query
 * itself, as `pageRoundQuery`.
 */
export function entryQuery(sql: Db, studioId: string, requestId: string) {
  const at = requestTimeOf(requestId);
  const when =
    at === null
      ? sql`and length(b.request_id[1]) < 26 and b.request_id @> array[${requestId}::text]`
      : sql`and b.last_at >= ${new Date(at)} and b.last_at < ${new Date(at)}::timestamptz + interval '1 minute' and b.first_at < ${new Date(at + 1)}
            and e.at >= ${new Date(at)} and e.at < ${new Date(at + 1)}`;
  return sql<ActivityRow[]>`select ${ENTRY_COLUMNS(sql)}, ${KEY_COLUMNS(sql)}
    from activity_batches b cross join lateral ${ENTRIES(sql)} ${KEY_JOIN(sql, 'b')}
    where b.studio_id = ${studioId} ${when} and e.request_id = ${requestId}
    limit 1`;
}

/** The studio's keys, newest first, for the key filter. */
export const keysOf = (sql: Db, studioId: string) =>
  sql<{ id: string; name: string; hint: string; revoked: boolean }[]>`
    select id, name, hint, revoked_at is not null as revoked from api_keys where studio_id = ${studioId}
    order by created_at desc, id desc`;

/**
 * How long one page may search the log (milliseconds). The log's key narrows a page to a studio, a key and a time;
 * an operation or outcome filter is checked entry by entry, so a rare one over a busy studio's 90 days could read
 * them all on every page view. Past this, the page asks for a narrower range instead. Tests shorten it.
 */
export const activitySearch = { timeoutMs: 2_000 };

/**
 * `read` within `activitySearch.timeoutMs`, in one transaction: `budget()` sets the time left as the next statement's
 * timeout. Null when the time ran out.
 */
export async function withinBudget<T>(
  sql: Sql,
  read: (tx: Db, budget: () => Promise<void>) => Promise<T>,
): Promise<T | null> {
  const deadline = performance.now() + activitySearch.timeoutMs;
  const timedOut = new Error('the page used its read budget');
  try {
    return (await sql.begin(async (tx) => {
      const budget = async () => {
        const left = Math.round(deadline - performance.now());
        if (left < 1) throw timedOut;
        await tx.unsafe(`set local statement_timeout = ${left}`);
      };
      return read(tx, budget);
    })) as T;
  } catch (err) {
    // query_canceled: the time was up during a statement
    if (err === timedOut || (err as { code?: string }).code === '57014') return null;
    throw err;
  }
}

/** Calls and errors of the studio from `activity_hourly`, per `unit` (hour or day, UTC) from `start` to `end`: the non-empty ones. */
export const hourlyCounts = (sql: Db, studioId: string, unit: 'hour' | 'day', start: Date, end: Date) =>
  sql<{ at: Date; calls: number; errors: number }[]>`
    select date_trunc(${unit}, hour, 'UTC') as at, sum(calls)::int as calls, sum(errors)::int as errors
    from activity_hourly where studio_id = ${studioId} and hour >= ${start} and hour < ${end}
    group by 1`;
