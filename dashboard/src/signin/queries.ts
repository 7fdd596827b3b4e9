/** The dashboard's sessions in Postgres (docs/design/dashboard.md): kept by the SHA-256 of the cookie's value. */
import type { Db } from '@studio/shared/io';

/** A signed-in session, as its row and its studio's say. */
export interface Session {
  /** SHA-256 of the cookie value; the cookie itself is never stored. */
  id: string;
  studioId: string;
  studioName: string;
  /** IANA zone of the studio, for local times beside UTC. */
  studioTimezone: string;
  csrfToken: string;
}

export const deleteExpiredSessions = (sql: Db) => sql`delete from dashboard_sessions where expires_at < now()`;

export const insertSession = (sql: Db, row: { id: string; studioId: string; csrfToken: string; expiresAt: Date }) =>
  sql`insert into dashboard_sessions ${sql(row)}`;

/** The session of a cookie's hash, with its studio's name and time zone: none once expired or the studio deleted. */
export async function liveSession(sql: Db, id: string): Promise<Session | undefined> {
  const [row] = await sql<Session[]>`
    select s.id, s.studio_id, s.csrf_token, st.name as studio_name, st.timezone as studio_timezone
    from dashboard_sessions s join studios st on st.id = s.studio_id and st.deleted_at is null
    where s.id = ${id} and s.expires_at > now()`;
  return row;
}

export const deleteSession = (sql: Db, session: Pick<Session, 'id' | 'studioId'>) =>
  sql`delete from dashboard_sessions where id = ${session.id} and studio_id = ${session.studioId}`;
