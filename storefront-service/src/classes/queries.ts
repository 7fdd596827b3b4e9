import { iso } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import type { StorefrontClass } from '@studio/shared/schemas';

export interface ClassFilter {
  from: Date;
  to: Date;
  discipline?: string;
  level?: string;
  instructorId?: string;
  limit: number;
}

interface Row {
  id: string;
  classId: string;
  classTitle: string;
  discipline: string | null;
  level: StorefrontClass['level'];
  mode: StorefrontClass['mode'];
  startsAt: Date;
  durationMinutes: number;
  instructorId: string;
  instructorName: string;
}

const toClass = (r: Row): StorefrontClass => ({
  id: r.id,
  classId: r.classId,
  classTitle: r.classTitle,
  discipline: r.discipline ?? '',
  level: r.level,
  mode: r.mode,
  startsAt: iso(r.startsAt),
  durationMinutes: r.durationMinutes,
  instructorId: r.instructorId,
  instructorName: r.instructorName,
});

/**
 * Upcoming live occurrences of the studio's public, live classes. The occurrence range
 * (studio_id, starts_at) is an index range scan on `occurrences_upcoming`, read in
 * start order, so the limit stops it early; classes and instructors join by primary key.
 * The occurrence's own instructor is shown (a reschedule or instructor change may differ from the class's).
 */
export async function upcomingOccurrences(sql: Sql, studioId: string, f: ClassFilter): Promise<StorefrontClass[]> {
  const rows = await sql<Row[]>`
    select o.id, o.class_id, c.title as class_title, c.discipline, c.level, c.mode,
           o.starts_at, o.duration_minutes, o.instructor_id, i.name as instructor_name
    from occurrences o
    join classes c on c.id = o.class_id and c.studio_id = o.studio_id
    join instructors i on i.id = o.instructor_id and i.studio_id = o.studio_id
    where o.studio_id = ${studioId}
      and o.status = 'scheduled'
      and o.starts_at >= ${f.from} and o.starts_at < ${f.to}
      and c.status = 'scheduled' and c.visibility = 'public'
      ${f.discipline !== undefined ? sql`and c.discipline = ${f.discipline}` : sql``}
      ${f.level !== undefined ? sql`and c.level = ${f.level}` : sql``}
      ${f.instructorId !== undefined ? sql`and o.instructor_id = ${f.instructorId}` : sql``}
    order by o.starts_at, o.id
    limit ${f.limit}`;
  return rows.map(toClass);
}
