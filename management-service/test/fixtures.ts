/** Shared setup of the Management tests (classes, schedule, members, idempotency, pagination). */
import { newId, SCOPES, type Scope } from '@studio/shared';
import type { Stack } from '../../test/harness';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** A whole-minute instant `days` from now (plus `hours`), so tests never straddle "now". */
export const future = (days: number, hours = 0) =>
  new Date(Math.floor((Date.now() + days * DAY + hours * HOUR) / 60_000) * 60_000).toISOString();

export async function instructor(s: Stack, studioId: string, name = 'Ana', active = true): Promise<string> {
  const id = newId('instructor');
  await s.sql`insert into instructors ${s.sql({ id, studioId, name, active })}`;
  return id;
}

export async function plan(s: Stack, studioId: string, status = 'active'): Promise<string> {
  const id = newId('plan');
  await s.sql`insert into plans ${s.sql({ id, studioId, name: 'Drop-in', type: 'drop_in', config: s.sql.json({ priceCents: 1500, currency: 'USD' }), status })}`;
  return id;
}

/** Two studios with a secret key each holding `scopes`: the second is the "other studio" of the 404 rules. */
export async function twoStudios(s: Stack, scopes: Scope[], input: { timezone?: string } = {}) {
  const a = await s.studio(input);
  const b = await s.studio();
  return {
    studioId: a.id,
    otherStudioId: b.id,
    key: (await s.key(a.id, 'secret', scopes)).key,
    otherKey: (await s.key(b.id, 'secret', scopes)).key,
  };
}

/** A Management write through the gateway with a fresh Idempotency-Key, and a JSON body when one is given. */
export function mgWrite(
  s: Stack,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  idem: string | null = crypto.randomUUID(),
  extra: Record<string, string> = {},
) {
  const headers: Record<string, string> = { ...extra };
  if (idem !== null) headers['idempotency-key'] = idem;
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  return s.mg(path, key, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A studio, an all-scopes secret key, and a JSON writer with a fresh Idempotency-Key each call. */
export async function studioWithKey(s: Stack, input: { modes?: string[] } = {}) {
  const studio = await s.studio(input);
  const { key } = await s.key(studio.id, 'secret', SCOPES);
  const write = (
    method: string,
    path: string,
    body?: unknown,
    idem: string | null = crypto.randomUUID(),
    extra: Record<string, string> = {},
  ) => mgWrite(s, method, path, key, body, idem, extra);
  const get = (path: string) => s.mg(path, key);
  return { studio, key, write, get };
}

export const classBody = (instructorId: string, over: Record<string, unknown> = {}) => ({
  title: 'Morning Flow',
  mode: 'broadcast',
  instructorId,
  startsAt: future(2),
  durationMinutes: 60,
  ...over,
});
