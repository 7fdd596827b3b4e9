/** The bench studio: 200 instructors, 2,000 classes, 20,000 occurrences, written in bulk. */
import { createApiKey } from '@studio/control';
import { newId } from '@studio/shared';
import type { Sql } from '@studio/shared/io';
import { createStudio } from '../lib/studios';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LEVELS = ['all_levels', 'beginner', 'intermediate', 'advanced'] as const;
const DISCIPLINES = ['yoga', 'pilates', 'barre', 'hiit', 'dance', 'meditation'] as const;

async function insertChunked(sql: Sql, table: string, rows: Record<string, unknown>[], size = 2_000) {
  for (let i = 0; i < rows.length; i += size)
    await sql`insert into ${sql(table)} ${sql(rows.slice(i, i + size) as never)}`;
}

export interface BenchSeed {
  studioId: string;
  instructors: number;
  classes: number;
  occurrences: number;
}

/**
 * Instructor j teaches classes k = 0..9, each weekly for 10 weeks, k at base + 16 h·k,
 * so no instructor is ever double-booked and the 14-day default window holds ~4,000
 * live occurrences (the answer is capped at 500). Every tenth class is private.
 */
export async function seedBenchStudio(
  sql: Sql,
  o = { instructors: 200, classes: 2_000, perClass: 10 },
): Promise<BenchSeed> {
  const { studio } = await createStudio(sql, { name: 'Bench Studio', slug: `bench-${Date.now().toString(36)}` });
  const studioId = studio.id;
  const instructors = Array.from({ length: o.instructors }, (_, j) => ({
    id: newId('instructor'),
    studioId,
    name: `Instructor ${String(j).padStart(3, '0')}`,
    bio: 'Teaches with care.',
    disciplines: [DISCIPLINES[j % DISCIPLINES.length]!],
  }));
  await insertChunked(sql, 'instructors', instructors);

  const base = Math.ceil((Date.now() + HOUR) / HOUR) * HOUR;
  const classes: Record<string, unknown>[] = [];
  const occurrences: Record<string, unknown>[] = [];
  for (let i = 0; i < o.classes; i++) {
    const j = i % o.instructors;
    const k = Math.floor(i / o.instructors);
    const startsAt = new Date(base + k * 16 * HOUR + (j % 12) * 5 * 60_000);
    const id = newId('class');
    classes.push({
      id,
      studioId,
      title: `${DISCIPLINES[i % DISCIPLINES.length]} ${i}`,
      mode: 'broadcast',
      instructorId: instructors[j]!.id,
      startsAt,
      durationMinutes: 60,
      discipline: DISCIPLINES[i % DISCIPLINES.length],
      level: LEVELS[i % LEVELS.length],
      capacity: 20,
      visibility: i % 10 === 9 ? 'private' : 'public',
      recurrence: sql.json({ intervalDays: 7, count: o.perClass }),
    });
    for (let w = 0; w < o.perClass; w++) {
      const s = new Date(startsAt.getTime() + w * 7 * DAY);
      occurrences.push({
        id: newId('occurrence'),
        studioId,
        classId: id,
        instructorId: instructors[j]!.id,
        startsAt: s,
        endsAt: new Date(s.getTime() + HOUR),
        durationMinutes: 60,
        capacity: 20,
      });
    }
  }
  await insertChunked(sql, 'classes', classes);
  await insertChunked(sql, 'occurrences', occurrences);
  await sql`vacuum analyze occurrences`.catch(() => sql`analyze occurrences`);
  await sql`analyze classes`;
  await sql`analyze instructors`;
  return { studioId, instructors: instructors.length, classes: classes.length, occurrences: occurrences.length };
}

/** `bun run bench`'s cached read: the bench studio and the publishable key a studio's site would call it with. */
export async function seedStorefrontRead(sql: Sql): Promise<BenchSeed & { key: string }> {
  const seed = await seedBenchStudio(sql);
  const { key } = await createApiKey(sql, { studioId: seed.studioId, kind: 'publishable', name: 'bench', scopes: [] });
  return { ...seed, key };
}
