/** The dashboard's sessions in Postgres (docs/design/dashboard.md): kept by the SHA-256 of the cookie's value. */
import type { Db } from '@studio/shared/io';

/** A signed-in session's row, with its studio's name and time zone and, in test mode, the sandbox it shows. */
export interface SessionRow {
  /** SHA-256 of the cookie value; the cookie itself is never stored. */
  id: string;
  /** The live studio the session signed in to. */
  studioId: string;
  studioName: string;
  /** IANA zone of the studio, for local times beside UTC. */
  studioTimezone: string;
  csrfToken: string;
  testMode: boolean;
  /**
   * In test mode, the sandbox the pages show: the one picked while it is live, else the default; null in live mode
   * or when the studio has no live sandbox (test mode's first use, or its sandboxes deleted meanwhile).
   */
  sandboxId: string | null;
  sandboxName: string | null;
}

export const deleteExpiredSessions = (sql: Db) => sql`delete from dashboard_sessions where expires_at < now()`;

export const insertSession = (sql: Db, row: { id: string; studioId: string; csrfToken: string; expiresAt: Date }) =>
  sql`insert into dashboard_sessions ${sql(row)}`;

/**
 * The session of a cookie's hash: none once expired or its studio deleted. Its sandbox is found only among its own
 * studio's live sandboxes, so no value in the row can lead a session to another studio's.
 */
export async function liveSession(sql: Db, id: string): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select s.id, s.studio_id, s.csrf_token, st.name as studio_name, st.timezone as studio_timezone, s.test_mode,
           sb.id as sandbox_id, sb.sandbox_name
    from dashboard_sessions s join studios st on st.id = s.studio_id and st.deleted_at is null
    left join lateral (
      select id, sandbox_name from studios
      where live_studio_id = s.studio_id and deleted_at is null and (id = s.sandbox_id or sandbox_name = 'default')
      order by coalesce(id = s.sandbox_id, false) desc limit 1
    ) sb on s.test_mode
    where s.id = ${id} and s.expires_at > now()`;
  return row;
}

/**
 * Switches a session to live or test mode, picking `sandboxId` when given: only one of the session's own studio's
 * live sandboxes (false: nothing changed, the sandbox is not the studio's).
 */
export async function setSessionMode(
  sql: Db,
  session: { id: string; studioId: string },
  testMode: boolean,
  sandboxId: string | null,
): Promise<boolean> {
  const rows = await sql`
    update dashboard_sessions set test_mode = ${testMode}, sandbox_id = coalesce(${sandboxId}::text, sandbox_id)
    where id = ${session.id} and studio_id = ${session.studioId}
      and (${sandboxId}::text is null or exists (
        select 1 from studios where id = ${sandboxId} and live_studio_id = ${session.studioId} and deleted_at is null))`;
  return rows.count === 1;
}

export const deleteSession = (sql: Db, session: { id: string; studioId: string }) =>
  sql`delete from dashboard_sessions where id = ${session.id} and studio_id = ${session.studioId}`;
