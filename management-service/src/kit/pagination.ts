import { AppError, type Caller } from '@studio/shared';
import type { Db } from '@studio/shared/io';

/**
 * Keyset pagination of docs/design/pagination.md, shared by every Management list (the query schema is
 * `PageQuery` in shared/src/schemas/page.ts; the answer `{ data, next_cursor }`):
 *
 *   const p = readPage(config.CURSOR_SECRET, caller, 'classes', query, { status: query.status });
 *   const rows = await sql`select *, ${sortKeySql(sql, 'created_at')} as sort_key from classes
 *     where studio_id = ${caller.studioId} ${afterSql(sql, p, 'created_at')}
 *     order by created_at, id limit ${p.limit + 1}`;
 *   return pageOf(p, rows, toJson);          // -> { data, next_cursor }
 */

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Non-numeric -> 25, below 1 -> 1, above 100 -> 100 (never an error). */
export function clampLimit(raw: unknown): number {
  if (raw === undefined || raw === null || raw === '') return DEFAULT_LIMIT;
  const s = String(raw).trim();
  if (!/^[+-]?\d+$/.test(s)) return DEFAULT_LIMIT;
  const n = Number(s);
  return Math.min(MAX_LIMIT, Math.max(1, n));
}

type Filters = Record<string, string | null | undefined>;

export interface PageParams {
  list: string;
  limit: number;
  /** Keyset position: the last row of the previous page (exact timestamp text, id). */
  after: { key: string; id: string } | null;
  /** The filters in force (from the cursor when there is one). */
  filters: Record<string, string>;
  secret: string;
  studioId: string;
}

interface CursorPayload {
  v: 1;
  l: string; // list name
  s: string; // studio
  k: string; // sort key of the last row
  i: string; // id of the last row
  f: Record<string, string>;
}

const b64url = (buf: Uint8Array | string) => Buffer.from(buf).toString('base64url');
const mac = (secret: string, data: string) =>
  new Bun.CryptoHasher('sha256', secret).update(data).digest().subarray(0, 18);

export function signCursor(secret: string, payload: CursorPayload): string {
  const body = b64url(JSON.stringify(payload));
  return `${body}.${b64url(mac(secret, body))}`;
}

function invalid(detail: string): never {
  throw new AppError('invalid_cursor', { detail });
}

function openCursor(secret: string, token: string): CursorPayload {
  const m = /^([A-Za-z0-9_-]{1,4000})\.([A-Za-z0-9_-]{24})$/.exec(token);
  if (!m) invalid('The cursor is not one this service issued.');
  const given = Buffer.from(m[2]!, 'base64url');
  const expected = mac(secret, m[1]!);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected))
    invalid('The cursor is not one this service issued, or it was altered.');
  try {
    const p = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as CursorPayload;
    if (p.v !== 1 || typeof p.k !== 'string' || typeof p.i !== 'string' || typeof p.f !== 'object' || p.f === null)
      invalid('Unreadable cursor.');
    return p;
  } catch (err) {
    if (err instanceof AppError) throw err;
    invalid('Unreadable cursor.');
  }
}

const clean = (f: Filters): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const k of Object.keys(f).sort()) if (f[k] != null && f[k] !== '') out[k] = f[k]!;
  return out;
};

/**
 * Reads `cursor` and `limit` of a list request. A cursor must be ours (HMAC), for this
 * list and this studio; it carries its filters, and a request that sends other filters
 * with it gets 400 `invalid_cursor` rather than a silently mixed page.
 */
export function readPage(
  secret: string,
  caller: Caller,
  list: string,
  query: { cursor?: string; limit?: string },
  filters: Filters = {},
): PageParams {
  const limit = clampLimit(query.limit);
  const asked = clean(filters);
  const base = { list, limit, secret, studioId: caller.studioId };
  if (query.cursor === undefined || query.cursor === '') return { ...base, after: null, filters: asked };
  const c = openCursor(secret, query.cursor);
  if (c.l !== list || c.s !== caller.studioId) invalid('The cursor belongs to another list.');
  for (const [k, v] of Object.entries(asked)) {
    if (c.f[k] !== v) invalid(`The cursor was made with other filters (${k}); start again without a cursor.`);
  }
  return { ...base, after: { key: c.k, id: c.i }, filters: c.f };
}

/** The exact (microsecond) text of a timestamp column, so the keyset never rounds to ms. */
export const sortKeySql = (sql: Db, column: string) =>
  sql`to_char(${sql(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** `and (column, id) > (cursor)` or nothing on the first page. `table` qualifies the columns in joins. */
export function afterSql(sql: Db, p: PageParams, column: string, table?: string) {
  if (!p.after) return sql``;
  const col = table ? sql`${sql(table)}.${sql(column)}` : sql(column);
  const id = table ? sql`${sql(table)}.id` : sql`id`;
  // `::text` first: a parameter typed timestamptz would be serialised through a JS Date (ms), losing µs
  return sql`and (${col}, ${id}) > (${p.after.key}::text::timestamptz, ${p.after.id})`;
}

/** Turns `limit + 1` fetched rows (each with `id` and `sortKey`) into a page. */
export function pageOf<R extends { id: string; sortKey: string }, T>(
  p: PageParams,
  rows: R[],
  toJson: (r: R) => T,
): Page<T> {
  const more = rows.length > p.limit;
  const slice = more ? rows.slice(0, p.limit) : rows;
  const last = slice[slice.length - 1];
  const next =
    more && last
      ? signCursor(p.secret, { v: 1, l: p.list, s: p.studioId, k: last.sortKey, i: last.id, f: p.filters })
      : null;
  return { data: slice.map(toJson), next_cursor: next };
}
