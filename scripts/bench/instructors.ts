/**
 * The uncached read the hop benches share (the `hop` case, `bun run bench:pair`): a studio with
 * 20 instructors and a secret key that may read them (`GET /v1/instructors`).
 */
import { createApiKey } from '@studio/control';
import { createSql } from '@studio/shared/io';
import { createStudio } from '../lib/studios';

export const INSTRUCTORS_PATH = '/v1/instructors';

export async function seedInstructors(databaseUrl: string, name: string) {
  const sql = createSql(databaseUrl, { max: 2 });
  try {
    const { studio } = await createStudio(sql, { name });
    const rows = Array.from({ length: 20 }, (_, i) => ({
      id: `ins_bench${String(i).padStart(3, '0')}`,
      studioId: studio.id,
      name: `Instructor ${i}`,
      disciplines: ['yoga'],
    }));
    await sql`insert into instructors ${sql(rows)}`;
    const secret = await createApiKey(sql, {
      studioId: studio.id,
      kind: 'secret',
      name: 'bench',
      scopes: ['instructors:read'],
    });
    return { studio, secret };
  } finally {
    await sql.end();
  }
}
