import { AppError, iso, newId, quote } from '@studio/shared';
import type { Broadcasts, Db, Redis, Sql, Tx } from '@studio/shared/io';
import type { Sandbox, SandboxSeed } from '@studio/shared/schemas';
import { forgetHotCopies } from '../kit/idempotency';
import { seedStudio } from './seed';

/**
 * Sandboxes (docs/design/test-mode.md): each a studio of its own, linked to its live studio, with its own records,
 * events, idempotency records, webhook endpoints, rate limits and activity, all kept apart by its own `studio_id`.
 * The Management API resets one (`POST /v1/sandbox/reset`, a test key's own); the dashboard and the CLI create, list,
 * rename, reset and delete them through this module.
 */

/** A studio has its default sandbox and at most four more. */
export const MAX_SANDBOXES = 5;
export const DEFAULT_SANDBOX = 'default';
const NAME_RE = /^[a-z0-9][a-z0-9-]{0,39}$/;

export interface SandboxRow {
  id: string;
  name: string;
  liveStudioId: string;
  studioName: string;
  createdAt: string;
  resetAt: string;
}

interface Row {
  id: string;
  sandboxName: string;
  liveStudioId: string;
  name: string;
  createdAt: Date;
  sandboxResetAt: Date | null;
}
const rowJson = (r: Row): SandboxRow => ({
  id: r.id,
  name: r.sandboxName,
  liveStudioId: r.liveStudioId,
  studioName: r.name,
  createdAt: iso(r.createdAt),
  resetAt: iso(r.sandboxResetAt ?? r.createdAt),
});

/** A sandbox as the API answers it (`Sandbox`): its row, and what its seed made. */
function sandboxOf(r: Row, seeded: SandboxSeed): Sandbox {
  const { createdAt: _, ...row } = rowJson(r);
  return { ...row, seeded };
}

/** A sandbox's name as stored: lower-case letters, digits and dashes, 1 to 40, starting with a letter or digit. */
export function checkedSandboxName(name: string): string {
  const n = name.trim().toLowerCase();
  if (!NAME_RE.test(n))
    throw new AppError('validation_failed', {
      detail: `a sandbox's name is 1 to 40 lower-case letters, digits and dashes (such as ci or local-dev), not ${quote(name)}`,
    });
  return n;
}

/** The live sandboxes of a live studio, the default first, then by creation. */
export async function listSandboxes(db: Db, liveStudioId: string): Promise<SandboxRow[]> {
  const rows = await db<Row[]>`
    select id, sandbox_name, live_studio_id, name, created_at, sandbox_reset_at from studios
    where live_studio_id = ${liveStudioId} and deleted_at is null
    order by sandbox_name <> ${DEFAULT_SANDBOX}, created_at, id`;
  return rows.map(rowJson);
}

/** One live sandbox of a live studio by its name, or null. */
export async function findSandbox(db: Db, liveStudioId: string, name: string): Promise<SandboxRow | null> {
  const [row] = await db<Row[]>`
    select id, sandbox_name, live_studio_id, name, created_at, sandbox_reset_at from studios
    where live_studio_id = ${liveStudioId} and sandbox_name = ${name} and deleted_at is null`;
  return row ? rowJson(row) : null;
}

/** A sandbox by its own id (limited to one live studio's, when given), or null. */
export async function sandboxById(db: Db, sandboxId: string, liveStudioId?: string): Promise<SandboxRow | null> {
  const [row] = await db<Row[]>`
    select id, sandbox_name, live_studio_id, name, created_at, sandbox_reset_at from studios
    where id = ${sandboxId} and live_studio_id is not null and deleted_at is null
      ${liveStudioId ? db`and live_studio_id = ${liveStudioId}` : db``}`;
  return row ? rowJson(row) : null;
}

/** The live studio `studioId` belongs to: itself when it is live, its live studio when it is a sandbox. */
export async function liveStudioOf(db: Db, studioId: string): Promise<string | null> {
  const [row] = await db<{ live: string }[]>`
    select coalesce(live_studio_id, id) as live from studios where id = ${studioId} and deleted_at is null`;
  return row?.live ?? null;
}

/**
 * A new sandbox of a live studio: a studio with a copy of its settings (name with " (test)", time zone, currency,
 * locale, modes, branding), seeded. Under a lock on the live studio's row, so two at once cannot pass the limit.
 */
async function makeSandbox(tx: Tx, liveStudioId: string, name: string): Promise<Sandbox> {
  const [live] = await tx<{ id: string; liveStudioId: string | null; slug: string }[]>`
    select id, live_studio_id, slug from studios where id = ${liveStudioId} and deleted_at is null for update`;
  if (!live) throw new AppError('not_found', { detail: `no studio ${liveStudioId}` });
  if (live.liveStudioId)
    throw new AppError('validation_failed', {
      detail: `${liveStudioId} is a sandbox; sandboxes belong to a live studio (${live.liveStudioId})`,
    });
  const taken = await tx<{ name: string }[]>`
    select sandbox_name as name from studios where live_studio_id = ${liveStudioId} and deleted_at is null`;
  if (taken.some((t) => t.name === name))
    throw new AppError('conflict', { detail: `the studio has a sandbox named ${quote(name)} already` });
  if (taken.length >= MAX_SANDBOXES)
    throw new AppError('sandbox_limit_reached', {
      detail: `A studio may have ${MAX_SANDBOXES} sandboxes; this one has ${taken.map((t) => t.name).join(', ')}. Delete one, or reset one and reuse it.`,
    });
  const id = newId('studio');
  const slug = `${live.slug.slice(0, 40)}-test-${crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36)}`;
  const [made] = await tx<Row[]>`
    insert into studios (id, name, slug, timezone, currency, locale, enabled_modes, primary_color, logo_url,
                         live_studio_id, sandbox_name, sandbox_reset_at)
    select ${id}, left(name, 113) || ' (test)', ${slug}, timezone, currency, locale, enabled_modes, primary_color,
           logo_url, id, ${name}, now()
    from studios where id = ${liveStudioId}
    returning id, sandbox_name, live_studio_id, name, created_at, sandbox_reset_at`;
  const seeded = await seedStudio(tx, id);
  return sandboxOf(made!, seeded);
}

/** A named sandbox of a live studio (409 `sandbox_limit_reached` past five; `conflict` for a name in use). */
export async function createSandbox(sql: Sql, liveStudioId: string, name: string): Promise<Sandbox> {
  const checked = checkedSandboxName(name);
  return sql.begin((tx) => makeSandbox(tx, liveStudioId, checked));
}

/** `createSandbox` in the caller's transaction (`seed:demo` makes its studio and the default sandbox in one). */
export const createSandboxIn = (tx: Tx, liveStudioId: string, name: string): Promise<Sandbox> =>
  makeSandbox(tx, liveStudioId, checkedSandboxName(name));

/**
 * The studio's default sandbox, made on first use (a first test key, the dashboard's first switch to test mode, a
 * first reset); `made` says whether this call made it.
 */
export async function ensureDefaultSandbox(
  sql: Sql,
  liveStudioId: string,
): Promise<{ sandbox: SandboxRow; made: boolean }> {
  const found = await findSandbox(sql, liveStudioId, DEFAULT_SANDBOX);
  if (found) return { sandbox: found, made: false };
  try {
    await createSandbox(sql, liveStudioId, DEFAULT_SANDBOX);
    return { sandbox: (await findSandbox(sql, liveStudioId, DEFAULT_SANDBOX))!, made: true };
  } catch (e) {
    // made meanwhile by another first use: that one is the default
    const again = await findSandbox(sql, liveStudioId, DEFAULT_SANDBOX);
    if (again) return { sandbox: again, made: false };
    throw e;
  }
}

/** A named sandbox, the default made when it is asked for and does not exist yet; any other name must exist. */
export async function sandboxNamed(sql: Sql, liveStudioId: string, name: string): Promise<SandboxRow> {
  const checked = checkedSandboxName(name);
  if (checked === DEFAULT_SANDBOX) return (await ensureDefaultSandbox(sql, liveStudioId)).sandbox;
  const found = await findSandbox(sql, liveStudioId, checked);
  if (!found) throw new AppError('not_found', { detail: `the studio has no sandbox named ${quote(checked)}` });
  return found;
}

/** What a reset deletes, in an order the foreign keys allow; keys, webhook endpoints and the activity log stay. */
const RESET_TABLES = [
  'class_plans',
  'occurrences',
  'programs',
  'content',
  'classes',
  'rooms',
  'locations',
  'instructors',
  'plans',
  'coupons',
  'members',
  'sites',
  'policies',
  'idempotency_records',
  'events',
  'webhook_deliveries', // its attempts go with it (on delete cascade)
  'webhook_fanout_deferred',
] as const;

/**
 * Resets a sandbox in the caller's transaction: deletes its records, events, idempotency records and webhook
 * deliveries, keeps its keys, webhook endpoints and activity, and seeds it again relative to now. Refuses a live
 * studio (403 `test_mode_required`). The Redis copies of the idempotency records it deleted are dropped too, so no
 * earlier answer is replayed after it. The caller tells the gateways (`storefrontChanged`) once it has committed.
 */
export async function resetSandboxIn(
  tx: Tx,
  sandboxId: string,
  idempotency?: { redis: Redis | null; prefix: string },
): Promise<Sandbox> {
  const [me] = await tx<Row[]>`
    select id, sandbox_name, live_studio_id, name, created_at, sandbox_reset_at from studios
    where id = ${sandboxId} and deleted_at is null for update`;
  if (!me) throw new AppError('not_found', { detail: `no sandbox ${sandboxId}` });
  if (!me.liveStudioId)
    throw new AppError('test_mode_required', {
      detail: `${sandboxId} is a live studio: only a sandbox is reset, with one of its test keys.`,
    });
  const keys = await tx<{ key: string }[]>`select key from idempotency_records where studio_id = ${sandboxId}`;
  for (const table of RESET_TABLES) await tx`delete from ${tx(table)} where studio_id = ${sandboxId}`;
  const seeded: SandboxSeed = await seedStudio(tx, sandboxId);
  const [done] = await tx<Row[]>`
    update studios set sandbox_reset_at = clock_timestamp(), updated_at = now() where id = ${sandboxId}
    returning id, sandbox_name, live_studio_id, name, created_at, sandbox_reset_at`;
  if (idempotency && keys.length)
    await forgetHotCopies(
      idempotency.redis,
      idempotency.prefix,
      sandboxId,
      keys.map((k) => k.key),
    );
  return sandboxOf(done!, seeded);
}

/** A reset as the dashboard and the CLI make it: in its own transaction, then every gateway told. */
export async function resetSandbox(
  sql: Sql,
  bus: Broadcasts,
  sandboxId: string,
  idempotency?: { redis: Redis | null; prefix: string },
): Promise<Sandbox> {
  const done = await sql.begin((tx) => resetSandboxIn(tx, sandboxId, idempotency));
  await bus.storefrontChanged(sandboxId);
  return done;
}

/** Renames a sandbox other than the default (the name `--sandbox` and the dashboard know it by). */
export async function renameSandbox(
  sql: Sql,
  liveStudioId: string,
  sandboxId: string,
  name: string,
): Promise<SandboxRow> {
  const checked = checkedSandboxName(name);
  const me = await sandboxById(sql, sandboxId, liveStudioId);
  if (!me) throw new AppError('not_found', { detail: `no sandbox ${sandboxId}` });
  if (me.name === DEFAULT_SANDBOX || checked === DEFAULT_SANDBOX)
    throw new AppError('validation_failed', { detail: 'the default sandbox keeps its name, and no other takes it' });
  try {
    await sql`update studios set sandbox_name = ${checked}, updated_at = now() where id = ${sandboxId}`;
  } catch (e) {
    if ((e as { code?: string }).code === '23505')
      throw new AppError('conflict', { detail: `the studio has a sandbox named ${quote(checked)} already` });
    throw e;
  }
  return (await sandboxById(sql, sandboxId, liveStudioId))!;
}

/**
 * Deletes a sandbox as a studio is deleted: its test keys then answer 403 `studio_required` on every gateway
 * (`propagated`: every gateway confirmed). Its records stay until the studio's own deletion purges them (none does
 * today: a deleted studio's rows are kept, docs/design/records.md).
 */
export async function deleteSandboxes(sql: Sql, bus: Broadcasts, ids: string[]): Promise<boolean> {
  if (!ids.length) return true;
  await sql`update studios set deleted_at = coalesce(deleted_at, now()), updated_at = now() where id in ${sql(ids)}`;
  return evictKeysOfStudios(sql, bus, ids);
}

/**
 * Drops the keys of deleted studios (sandboxes, or a studio with its sandboxes) from every gateway's memory, so they
 * answer 403 `studio_required` at once: true when every gateway confirmed in time.
 */
export async function evictKeysOfStudios(sql: Sql, bus: Broadcasts, ids: string[]): Promise<boolean> {
  const keys = await sql<{ hash: string }[]>`select hash from api_keys where studio_id in ${sql(ids)}`;
  return bus.evictKeys(
    keys.map((k) => k.hash),
    { revoked: false },
  );
}
