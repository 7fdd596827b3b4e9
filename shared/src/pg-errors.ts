import { AppError, type ProblemCode } from './problem';

/** Postgres constraint violations -> our problem codes, in one place (contract §4). */
const BY_CONSTRAINT: Record<string, ProblemCode> = {
  occurrences_no_double_booking: 'instructor_double_booked',
  members_email: 'member_exists',
  coupons_active_code: 'coupon_code_taken',
};

interface PgError {
  code?: string;
  constraint_name?: string;
}

export function translatePgError(err: unknown): AppError | null {
  if (!err || typeof err !== 'object' || !('code' in err)) return null;
  const e = err as PgError;
  const known = e.constraint_name ? BY_CONSTRAINT[e.constraint_name] : undefined;
  if (known) return new AppError(known);
  switch (e.code) {
    case '23P01':
      return new AppError('instructor_double_booked');
    case '40001':
    case '40P01':
      return new AppError('service_unavailable', { detail: 'Concurrent update, please retry.' });
    default:
      return null;
  }
}
