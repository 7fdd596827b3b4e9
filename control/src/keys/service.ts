import {
  AppError,
  generateKey,
  hashKey,
  iso,
  isoOrNull,
  isScope,
  type KeyKind,
  keyHint,
  keyModeOf,
  newId,
  parseOriginList,
  TEST_SCOPES,
} from '@studio/shared';
import type { Broadcasts, Sql, Tx } from '@studio/shared/io';
import * as q from './queries';

/**
 * Key administration (docs/design/keys.md), the one module the dashboard and the operator CLI call: create, roll,
 * revoke, origins, rename, list. Never stores or logs the full key. A change that a gateway may have cached (revoke,
 * roll, origins) returns once every gateway confirmed it dropped the key (`propagated`), over Redis or, in
 * single-node mode, Postgres (`bus`). `studioId`, when given, limits it to one studio (the dashboard's session).
 */
export type { ApiKeyRow, LiveKey } from './queries';

export const keyRecordJson = (r: q.ApiKeyRow) => ({
  id: r.id,
  studioId: r.studioId,
  kind: r.kind,
  /** `test`: a sandbox's key (docs/design/test-mode.md), as its text (and so its hint) says. */
  mode: keyModeOf(r.hint),
  name: r.name,
  scopes: r.kind === 'secret' ? r.scopes : [],
  hint: r.hint,
  createdAt: iso(r.createdAt),
  lastUsedAt: isoOrNull(r.lastUsedAt),
  revokedAt: isoOrNull(r.revokedAt),
  expiresAt: isoOrNull(r.expiresAt),
  allowedOrigins: r.kind === 'publishable' ? r.allowedOrigins : null,
  rolledFrom: r.rolledFrom ?? null,
});
export type ApiKeyJson = ReturnType<typeof keyRecordJson>;

/** Origins for a key of this kind: null (any), a checked list (publishable keys), or an error. */
function checkedOrigins(kind: KeyKind, origins: string[] | null | undefined): string[] | null {
  if (!origins?.length) return null;
  if (kind !== 'publishable')
    throw new AppError('validation_failed', {
      detail: 'only publishable keys are restricted to origins (secret keys never run in a browser)',
    });
  const parsed = parseOriginList(origins);
  if ('error' in parsed) throw new AppError('validation_failed', { detail: parsed.error });
  return parsed.origins;
}

/** A key's name as stored: 1 to 100 characters once trimmed. */
function checkedName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 100)
    throw new AppError('validation_failed', { detail: 'name must be 1..100 characters' });
  // Postgres text cannot hold NUL: a validation failure, not a 500 (docs/design/hostile-callers.md)
  if (trimmed.includes('\u0000')) throw new AppError('validation_failed', { detail: 'name cannot contain NUL' });
  return trimmed;
}

export async function createApiKey(
  sql: Sql | Tx,
  input: {
    studioId: string;
    kind: KeyKind;
    name: string;
    scopes?: string[];
    expiresAt?: Date | null;
    allowedOrigins?: string[] | null;
    rolledFrom?: string;
    /** The id, when the caller chose it (a dashboard form's: `onceId`); one that exists already is a 409 `conflict`. */
    id?: string;
  },
) {
  const scopes = [...new Set(input.scopes ?? [])];
  const bad = scopes.filter((s) => !isScope(s));
  if (bad.length) throw new AppError('validation_failed', { detail: `unknown scope ${bad.join(', ')}` });
  if (input.kind === 'publishable' && scopes.length)
    throw new AppError('validation_failed', { detail: 'publishable keys have no scopes' });
  const name = checkedName(input.name);
  const allowedOrigins = checkedOrigins(input.kind, input.allowedOrigins);
  // a sandbox's keys are test keys, and only they may hold a test-only scope
  const mode = await q.studioMode(sql, input.studioId);
  if (!mode) throw new AppError('not_found', { detail: `no studio ${input.studioId}` });
  const testOnly = scopes.filter((s) => (TEST_SCOPES as readonly string[]).includes(s));
  if (mode === 'live' && testOnly.length)
    throw new AppError('validation_failed', {
      detail: `${testOnly.join(', ')} is for test keys only (a sandbox's); a live key never resets anything`,
    });
  const key = generateKey(input.kind, mode);
  const id = input.id ?? newId('key');
  const row = await q.insertKey(sql, {
    id,
    studioId: input.studioId,
    kind: input.kind,
    name,
    scopes: scopes.sort(),
    hash: hashKey(key),
    hint: keyHint(key),
    expiresAt: input.expiresAt ?? null,
    allowedOrigins,
    rolledFrom: input.rolledFrom ?? null,
  });
  if (!row) throw new AppError('conflict', { detail: `a key ${id} exists already` });
  return { key, record: keyRecordJson(row) };
}

/** Revoke in Postgres (the source of truth), then evict the key from every gateway and wait for their confirmation. */
export async function revokeApiKey(sql: Sql, bus: Broadcasts, keyId: string, studioId?: string) {
  const row = await q.markRevoked(sql, keyId, studioId);
  if (!row) throw new AppError('not_found', { detail: `no key ${keyId}` });
  const propagated = await bus.evictKeys([row.hash], { revoked: true });
  return { ...keyRecordJson(row), propagated };
}

/**
 * The key that replaced this one, if it was rolled: one replacement per key, ever (a second roll, a form sent
 * twice, a retried command, or after its replacement was revoked, would leave two keys of one lineage).
 */
export const replacementOf = q.replacementOf;

/**
 * Roll a key (docs/design/keys.md): a new key with the same studio, kind, name and scopes, and the old
 * one's `expiresAt` set `expiresInMs` from now (0: now; an earlier expiry is kept). Every replica
 * drops its cached record of the old key before this returns, so the expiry holds at its instant.
 */
export async function rollApiKey(sql: Sql, bus: Broadcasts, keyId: string, expiresInMs: number, studioId?: string) {
  // one transaction: a roll either gives the new key and ends the old one, or does nothing
  const { old, next, previous } = await sql.begin(async (tx) => {
    const old = await q.liveKeyForUpdate(tx, keyId, studioId);
    if (!old) throw new AppError('not_found', { detail: `no live key ${keyId}` });
    // a fresh key is made with key:create
    const successor = await q.replacementOf(tx, keyId);
    if (successor)
      throw new AppError('conflict', {
        detail: `key ${keyId} was already rolled: its replacement is ${successor}; roll that one, or revoke the old key to end it now`,
      });
    const next = await createApiKey(tx, {
      studioId: old.studioId,
      kind: old.kind,
      name: old.name,
      scopes: old.scopes,
      allowedOrigins: old.allowedOrigins,
      rolledFrom: old.id,
    });
    const previous = await q.expireWithin(tx, keyId, expiresInMs);
    return { old, next, previous };
  });
  const propagated = await bus.evictKeys([old.hash], { revoked: false });
  return { ...next, previous: { id: previous!.id, expiresAt: iso(previous!.expiresAt!) }, propagated };
}

/**
 * Restrict a publishable key to these origins (an empty list: any origin again). Every
 * replica drops its cached record before this returns, so the change holds at once.
 */
export async function setKeyOrigins(sql: Sql, bus: Broadcasts, keyId: string, origins: string[], studioId?: string) {
  const key = await q.keyById(sql, keyId, studioId);
  if (!key) throw new AppError('not_found', { detail: `no key ${keyId}` });
  const row = await q.updateOrigins(sql, keyId, checkedOrigins(key.kind, origins));
  const propagated = await bus.evictKeys([key.hash], { revoked: false });
  return { ...keyRecordJson(row!), propagated };
}

/** A new name for a key of the studio (a gateway caches no name: nothing to broadcast). */
export async function renameApiKey(sql: Sql, studioId: string, keyId: string, name: string): Promise<void> {
  if (!(await q.updateName(sql, studioId, keyId, checkedName(name))))
    throw new AppError('not_found', { detail: `no key ${keyId}` });
}

export async function listApiKeys(sql: Sql, studioId: string) {
  return (await q.keysOf(sql, studioId)).map(keyRecordJson);
}

/** The studio's key (any state), or undefined. */
export const studioKey = (sql: Sql, studioId: string, keyId: string) => q.keyById(sql, keyId, studioId);
/** The studio's key, while it is live (neither revoked nor expired); null otherwise. */
export const liveKey = q.liveKey;
/** The name of the studio's key when it is revoked (the Keys page's notice after a revoke); null otherwise. */
export const revokedKeyName = q.revokedKeyName;
