import { iso, isoOrNull } from '@studio/shared';
import type { Db } from '@studio/shared/io';
import type { UpdateContentBody, Video } from '@studio/shared/schemas';
import { afterSql, type Page, type PageParams, pageOf, sortKeySql } from '../kit/pagination';

interface Row {
  id: string;
  title: string;
  description: string | null;
  durationSeconds: number | null;
  instructorId: string | null;
  visibility: Video['visibility'];
  status: Video['status'];
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
const COLUMNS =
  'id, title, description, duration_seconds, instructor_id, visibility, status, deleted_at, created_at, updated_at';

const toVideo = (r: Row): Video => ({
  id: r.id,
  title: r.title,
  description: r.description,
  durationSeconds: r.durationSeconds,
  instructorId: r.instructorId,
  visibility: r.visibility,
  status: r.status,
  deletedAt: isoOrNull(r.deletedAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** One page of the studio's videos that are not deleted, keyset on (created_at, id) over `content_studio`. */
export async function listContentPage(db: Db, studioId: string, p: PageParams): Promise<Page<Video>> {
  const rows = await db<(Row & { sortKey: string })[]>`
    select ${db.unsafe(COLUMNS)}, ${sortKeySql(db, 'created_at')} as sort_key from content
    where studio_id = ${studioId} and deleted_at is null ${afterSql(db, p, 'created_at')}
    order by created_at, id limit ${p.limit + 1}`;
  return pageOf(p, rows, toVideo);
}

/** A video of the studio that is not deleted; null for a deleted one or another studio's id. */
export async function getContent(db: Db, studioId: string, id: string): Promise<Video | null> {
  const [row] = await db<
    Row[]
  >`select ${db.unsafe(COLUMNS)} from content where studio_id = ${studioId} and id = ${id} and deleted_at is null`;
  return row ? toVideo(row) : null;
}

/** A live video, locked for the rest of the transaction; null when the studio has no such video. */
export async function lockVideo(db: Db, studioId: string, id: string): Promise<Video | null> {
  const [row] = await db<
    Row[]
  >`select ${db.unsafe(COLUMNS)} from content where studio_id = ${studioId} and id = ${id} and deleted_at is null for update`;
  return row ? toVideo(row) : null;
}

/** Share-locks the instructor row so it cannot be deactivated under this write. */
export async function isLiveInstructor(db: Db, studioId: string, id: string): Promise<boolean> {
  const rows = await db`select 1 from instructors where studio_id = ${studioId} and id = ${id} and active for share`;
  return rows.length > 0;
}

export async function updateVideo(
  db: Db,
  studioId: string,
  id: string,
  patch: UpdateContentBody,
): Promise<Video | null> {
  const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const [row] = await db<Row[]>`
    update content set ${db({ ...set, updatedAt: new Date() })}
    where studio_id = ${studioId} and id = ${id} and deleted_at is null returning ${db.unsafe(COLUMNS)}`;
  return row ? toVideo(row) : null;
}

export async function markVideoDeleted(db: Db, studioId: string, id: string): Promise<Video | null> {
  const [row] = await db<Row[]>`
    update content set deleted_at = now(), updated_at = now()
    where studio_id = ${studioId} and id = ${id} and deleted_at is null returning ${db.unsafe(COLUMNS)}`;
  return row ? toVideo(row) : null;
}
