import { expect, test } from 'bun:test';
import { translatePgError } from '@studio/shared';

const code = (err: unknown) => translatePgError(err)?.code ?? null;

test('named constraints keep their precise codes', () => {
  expect(code({ code: '23P01', constraint_name: 'occurrences_no_double_booking' })).toBe('instructor_double_booked');
  expect(code({ code: '23505', constraint_name: 'members_email' })).toBe('member_exists');
  expect(code({ code: '23505', constraint_name: 'coupons_active_code' })).toBe('coupon_code_taken');
});

test('any other unique or foreign-key violation is still a 409 / 422, never a 500', () => {
  expect(code({ code: '23505', constraint_name: 'some_future_unique' })).toBe('conflict');
  expect(translatePgError({ code: '23505' })!.status).toBe(409);
  expect(code({ code: '23503', constraint_name: 'some_fk' })).toBe('unknown_reference');
  expect(translatePgError({ code: '23503' })!.status).toBe(422);
});

test('a lost, refused or shutting-down connection is 503 service_unavailable', () => {
  for (const c of [
    'CONNECTION_CLOSED',
    'CONNECTION_ENDED',
    'CONNECTION_DESTROYED',
    'CONNECT_TIMEOUT',
    'ECONNREFUSED',
    'ECONNRESET',
    '08006',
    '08001',
    '57P01',
    '57P03',
    '53300',
  ]) {
    expect({ c, code: code({ code: c }) }).toEqual({ c, code: 'service_unavailable' });
  }
  expect(translatePgError({ code: 'ECONNREFUSED' })!.options.headers).toEqual({ 'retry-after': '1' });
});

test('anything else is not ours to translate', () => {
  expect(translatePgError(new Error('boom'))).toBeNull();
  expect(translatePgError({ code: '42P01' })).toBeNull();
  expect(translatePgError(null)).toBeNull();
});

test('a data exception (SQLSTATE class 22) is 422 validation_failed, never a 500', () => {
  for (const c of ['22P05', '22008', '22021', '22003', '22007', '22001']) {
    expect({ c, code: code({ code: c }) }).toEqual({ c, code: 'validation_failed' });
    expect(translatePgError({ code: c })!.status).toBe(422);
  }
});
