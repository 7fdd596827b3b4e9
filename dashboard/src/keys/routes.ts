import { Elysia } from 'elysia';
import type { DashboardDeps } from '../deps';
import type { Guard } from '../guard';
import { notAllowed, pageOf, pageUnder } from '../routing';
import { keyOrigins, renameKey, rollKey } from './actions';
import { createKey, keysPage, revokedNotice, revokeKey } from './service';

export const KEY_ID = /^key_[0-9A-Za-z]{1,64}$/;
const ids = { keyId: KEY_ID };

/** The Keys page and each key's actions (roll, rename, websites, revoke): `/keys`, `/keys/{keyId}/{action}`. */
export function keysRoutes(deps: DashboardDeps, signedIn: Guard) {
  const actions = { roll: rollKey, rename: renameKey, origins: keyOrigins };
  const app = new Elysia({ name: 'dashboard:keys' })
    .get(
      '/keys',
      pageOf(
        signedIn(async (_req, url, s) =>
          keysPage(deps, s, {
            notice: await revokedNotice(deps, s, url.searchParams.get('revoked')),
            hideInactive: url.searchParams.get('hide') === 'inactive',
          }),
        ),
      ),
    )
    .post('/keys', pageOf(signedIn((_req, _url, s, form) => createKey(deps, s, form!))))
    .all('/keys', notAllowed('GET, POST'))
    .post(
      '/keys/:keyId/revoke',
      pageUnder(ids, (p) => signedIn((_q, _u, s, form) => revokeKey(deps, s, p.keyId!, form!))),
    )
    .all('/keys/:keyId/revoke', notAllowed('POST', ids));
  for (const [action, run] of Object.entries(actions)) {
    const path = `/keys/:keyId/${action}`;
    const handler = pageUnder(ids, (p) => signedIn((_q, _u, s, form) => run(deps, s, p.keyId!, form)));
    app.get(path, handler).post(path, handler).all(path, notAllowed('GET, POST', ids));
  }
  return app;
}
