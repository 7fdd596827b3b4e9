import type { Config } from '@studio/shared';
import type { Sql } from '@studio/shared/db';

/** Demo data (issue 4 fills this in). */
export async function seedDemo(_sql: Sql, _config: Config): Promise<unknown> {
  throw new Error('seed:demo is not available yet');
}
