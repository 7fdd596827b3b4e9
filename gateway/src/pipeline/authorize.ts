import { ANY_READ, originAllowed, problems, quote, scopeAllows } from '@studio/shared';
import type { HeldAnswer } from '../answer';
import type { KeyRecord } from '../keys/resolver';
import { type Ctx, type KeyLookup, type KeyProblem, keyDetail, refuse } from './context';
import type { SurfaceProfile } from './profile';

/** Why this record may not call this surface now, or null. Expiry is checked against its own instant on every call, so no cache can stretch it. */
export function judgeKey(rec: KeyRecord | null, kind: KeyRecord['kind'], now = Date.now()): KeyProblem | null {
  if (!rec) return 'api_key_invalid';
  if (rec.revoked) return 'api_key_revoked';
  if (rec.expiresAt !== null && now >= rec.expiresAt) return 'api_key_expired';
  if (rec.kind !== kind) return 'api_key_wrong_kind';
  return null;
}

/**
 * Step 4: may this key make this call? In order: a route that exists, a method it
 * allows, a usable key of this surface's kind, a live studio, an allowed origin (keys
 * restricted to origins), the operation's scope.
 * A key that resolved is kept on the context even when refused, so its studio's
 * activity log shows the call.
 */
export function authorizeStep(p: SurfaceProfile) {
  return function authorize(c: Ctx, found: KeyLookup): HeldAnswer | null {
    if ('rec' in found && found.rec) c.key = found.rec;
    if (!c.route)
      return refuse(p, c, 'route_not_found', { detail: `No route ${quote(c.path)} on the ${p.surface} surface.` });
    const op = c.op;
    if (!op) {
      const allow = (c.route as { allow: string[] }).allow.join(', ');
      return refuse(p, c, 'method_not_allowed', {
        detail: `${quote(c.method)} is not allowed on ${quote(c.path)}; allowed: ${allow}.`,
        headers: { allow },
      });
    }
    const keyProblem = 'problem' in found ? found.problem : judgeKey(found.rec, p.keyKind);
    if (keyProblem) return refuse(p, c, keyProblem, { detail: keyDetail(keyProblem, p) });
    const k = c.key!;
    if (!k.studioLive) return refuse(p, c, 'studio_required', problems.studioGone().options);
    // a key restricted to its sites' pages: a browser names the page's origin; a server-side call names none and passes
    const origin = k.allowedOrigins ? c.req.headers.get('origin') : null;
    if (origin !== null && !originAllowed(k.allowedOrigins, origin)) {
      return refuse(p, c, 'origin_not_allowed', {
        detail: `This key may not be used from ${quote(origin)}; it is restricted to its studio's own websites.`,
      });
    }
    // before the scope: a live key can never hold the scope of a test-only operation, so say why
    if (op.testOnly && k.mode !== 'test')
      return refuse(p, c, 'test_mode_required', {
        detail: `${c.method} ${c.path} works on a sandbox: call it with a test secret key (svc_sk_test_…), not a live key.`,
      });
    if (op.scope && !scopeAllows(k.scopes, op.scope)) {
      const needs = op.scope === ANY_READ ? 'any one read scope (such as classes:read)' : `the ${op.scope} scope`;
      return refuse(p, c, 'scope_required', {
        detail: `This operation needs ${needs}.`,
        extra: { requiredScope: op.scope },
      });
    }
    return null;
  };
}
