import type { KeyInfo } from '../schemas/keys';
import type { Caller } from '../signing';
import { isoOrNull } from '../time';
import type { Db } from './db';

/**
 * The caller's key as `GET /v1/key` describes it (shared/src/schemas/keys.ts), read from the signed caller's key id and
 * studio: the same on both surfaces. null when the key is gone (deleted meanwhile).
 */
export async function describeKey(db: Db, caller: Pick<Caller, 'keyId' | 'studioId'>): Promise<KeyInfo | null> {
  const [row] = await db<
    {
      id: string;
      name: string;
      kind: 'publishable' | 'secret';
      scopes: string[];
      expiresAt: Date | null;
      allowedOrigins: string[] | null;
      studioName: string;
      sandboxName: string | null;
      liveStudioId: string | null;
    }[]
  >`
    select k.id, k.name, k.kind, k.scopes, k.expires_at, k.allowed_origins,
           s.name as studio_name, s.sandbox_name, s.live_studio_id
    from api_keys k join studios s on s.id = k.studio_id
    where k.id = ${caller.keyId} and k.studio_id = ${caller.studioId}`;
  if (!row) return null;
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    mode: row.liveStudioId ? 'test' : 'live',
    studio: { id: caller.studioId, name: row.studioName },
    sandbox: row.liveStudioId ? { name: row.sandboxName!, liveStudioId: row.liveStudioId } : null,
    scopes: row.kind === 'secret' ? row.scopes : [],
    expiresAt: isoOrNull(row.expiresAt),
    allowedOrigins: row.kind === 'publishable' ? row.allowedOrigins : null,
  };
}
