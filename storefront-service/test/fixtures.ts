/** Rows written straight to Postgres, so Storefront tests do not depend on the Management surface. */
import { newId } from '@studio/shared';
import type { Sql } from '@studio/shared/io';

export async function instructor(
  sql: Sql,
  studioId: string,
  o: { name?: string; active?: boolean; disciplines?: string[] } = {},
) {
  const id = newId('instructor');
  await sql`insert into instructors ${sql({ id, studioId, name: o.name ?? `Teacher ${id.slice(-4)}`, bio: 'Bio', disciplines: o.disciplines ?? ['yoga'], active: o.active ?? true })}`;
  return id;
}

export interface ClassInput {
  instructorId: string;
  title?: string;
  startsAt: Date;
  /** Further occurrences, every `intervalDays`. */
  count?: number;
  intervalDays?: number;
  durationMinutes?: number;
  discipline?: string | null;
  level?: string;
  mode?: string;
  visibility?: string;
  status?: string;
}

/** A class and its occurrences (the class's start is its first occurrence). */
export async function klass(sql: Sql, studioId: string, c: ClassInput) {
  const id = newId('class');
  const duration = c.durationMinutes ?? 60;
  const status = c.status ?? 'scheduled';
  await sql`insert into classes ${sql({
    id,
    studioId,
    title: c.title ?? `Class ${id.slice(-4)}`,
    mode: c.mode ?? 'broadcast',
    instructorId: c.instructorId,
    startsAt: c.startsAt,
    durationMinutes: duration,
    discipline: c.discipline === undefined ? 'yoga' : c.discipline,
    level: c.level ?? 'all_levels',
    visibility: c.visibility ?? 'public',
    status,
  })}`;
  const occurrences: string[] = [];
  for (let i = 0; i < (c.count ?? 1); i++) {
    const startsAt = new Date(c.startsAt.getTime() + i * (c.intervalDays ?? 1) * 86_400_000);
    const occ = newId('occurrence');
    occurrences.push(occ);
    await sql`insert into occurrences ${sql({
      id: occ,
      studioId,
      classId: id,
      instructorId: c.instructorId,
      startsAt,
      endsAt: new Date(startsAt.getTime() + duration * 60_000),
      durationMinutes: duration,
      status,
    })}`;
  }
  return { id, occurrences };
}

export async function plan(
  sql: Sql,
  studioId: string,
  o: { name?: string; visibility?: string; status?: string } = {},
) {
  const id = newId('plan');
  await sql`insert into plans ${sql({
    id,
    studioId,
    name: o.name ?? `Plan ${id.slice(-4)}`,
    type: 'drop_in',
    config: sql.json({ priceCents: 1500, currency: 'USD' }) as never,
    description: 'One class',
    visibility: o.visibility ?? 'public',
    status: o.status ?? 'active',
  })}`;
  return id;
}

export const inHours = (h: number) => new Date(Date.now() + h * 3_600_000);
