import { Elysia } from 'elysia';
import type { DashboardDeps } from '../deps';
import type { Guard } from '../guard';
import { notAllowed, pageOf, pageUnder } from '../routing';
import { activityEntryPage, activityPage } from './service';

const ids = { requestId: /^[0-9A-Za-z_-]{1,100}$/ };

/** The Activity page (`/activity`, with its filters and search) and one call's detail (`/activity/{requestId}`). */
export const activityRoutes = (deps: DashboardDeps, signedIn: Guard) =>
  new Elysia({ name: 'dashboard:activity' })
    .get('/activity', pageOf(signedIn((_req, url, s) => activityPage(deps, s, url))))
    .all('/activity', notAllowed('GET'))
    .get(
      '/activity/:requestId',
      pageUnder(ids, (p) => signedIn((_q, _u, s) => activityEntryPage(deps, s, p.requestId!))),
    )
    .all('/activity/:requestId', notAllowed('GET', ids));
