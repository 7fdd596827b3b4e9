import { AppError, type ProblemCode } from './problem';

/**
 * Postgres errors -> our problems, in one place (model: Supabase Storage `fromDBError`).
 * Named constraints map to precise codes; any other unique or foreign-key violation still
 * maps to a 409 / 422 the caller can act on; a data exception (class 22) is 422; a lost or refused
 * connection is 503, never 500.
 */
const BY_CONSTRAINT: Record<string, [ProblemCode, string?]> = {
  occurrences_no_double_booking: ['instructor_double_booked'],
  members_email: [
    'member_exists',
    'A member of this studio already has this e-mail address (compared case-insensitively): update that member, or cancel it before inviting the address again.',
  ],
  coupons_active_code: [
    'coupon_code_taken',
    'An active coupon of this studio already has this code (compared case-insensitively): choose another, or archive that coupon first.',
  ],
};

/** postgres.js's own connection errors (no SQLSTATE: the server never answered). */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);

interface PgError {
  code?: string;
  constraint_name?: string;
}

const unavailable = () =>
  new AppError('service_unavailable', {
    detail: 'The database is unavailable; retry shortly.',
    headers: { 'retry-after': '1' },
  });

export function translatePgError(err: unknown): AppError | null {
  if (!err || typeof err !== 'object' || !('code' in err)) return null;
  const e = err as PgError;
  const known = e.constraint_name ? BY_CONSTRAINT[e.constraint_name] : undefined;
  if (known) return new AppError(known[0], known[1] ? { detail: known[1] } : {});
  const code = String(e.code);
  if (CONNECTION_CODES.has(code)) return unavailable();
  switch (code) {
    case '23P01':
      return new AppError('instructor_double_booked');
    case '23505':
      return new AppError('conflict', { detail: 'This conflicts with a record that already exists.' });
    case '23503':
      return new AppError('unknown_reference', {
        detail: 'The request refers to a record that does not exist in this studio.',
      });
    case '40001':
    case '40P01':
      return new AppError('service_unavailable', {
        detail: 'Concurrent update, please retry.',
        headers: { 'retry-after': '1' },
      });
    case '53300': // too many connections
    case '57P01': // admin shutdown
    case '57P02': // crash shutdown
    case '57P03': // cannot connect now (starting up, in recovery)
      return unavailable();
    default:
      if (code.startsWith('08')) return unavailable(); // class 08: connection exception
      // class 22, data exception (22P05 NUL in text, 22008 date out of range, 22021 bad byte sequence, 22003 out of
      // range): a value validation let through; the caller's data, not our fault, so 422 rather than 500
      if (code.startsWith('22'))
        return new AppError('validation_failed', {
          detail: 'A value in the request cannot be stored (out of range or not valid text).',
        });
      return null;
  }
}
