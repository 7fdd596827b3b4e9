import { timingSafeEqual } from 'node:crypto';
import { ID_PREFIXES, type IdKind, newId } from '@studio/shared';

/**
 * A create form's record id, chosen when the form is drawn and signed with DASHBOARD_SECRET for the session that
 * drew it. A form sent twice (a reload that re-posts it without JavaScript, a double click) names the same id, so
 * the second send finds the record the first one made instead of making another: a second live key nobody copied,
 * or a second endpoint that gets every event twice. The signature keeps a caller from naming ids of its own.
 */
const mac = (secret: string, sessionId: string, id: string) =>
  new Bun.CryptoHasher('sha256', secret).update(`create-form:${sessionId}:${id}`).digest('base64url');

/** The value of a create form's `once` field: a fresh id of `kind` and its signature. */
export const onceField = (secret: string, sessionId: string, kind: IdKind): string => {
  const id = newId(kind);
  return `${id}.${mac(secret, sessionId, id)}`;
};

/**
 * The id a create form was drawn with: undefined when it has none (a page drawn before forms carried one: the
 * record gets a fresh id, as before), null when its value is malformed or not signed for this session.
 */
export function onceId(secret: string, sessionId: string, kind: IdKind, value: FormDataEntryValue | null) {
  if (value === null) return undefined;
  if (typeof value !== 'string' || value.length > 200) return null;
  const [id, sig, extra] = value.split('.');
  if (!id || !sig || extra !== undefined || !new RegExp(`^${ID_PREFIXES[kind]}_[0-9A-Za-z]{22}$`).test(id)) return null;
  const want = Buffer.from(mac(secret, sessionId, id));
  const got = Buffer.from(sig);
  return want.length === got.length && timingSafeEqual(want, got) ? id : null;
}
