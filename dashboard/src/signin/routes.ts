import { Elysia } from 'elysia';
import type { DashboardDeps } from '../deps';
import { type Guard, readForm } from '../guard';
import { messagePage } from '../html';
import { notAllowed, pageOf } from '../routing';
import { loginLinkPage, signInPage, signOut, useLoginLink } from './service';
import { sameOrigin } from './session';

/** Signing in with a link (`/sign-in`, `/login`) and out (`/logout`). */
export const signinRoutes = (deps: DashboardDeps, signedIn: Guard) =>
  new Elysia({ name: 'dashboard:signin' })
    .get(
      '/sign-in',
      pageOf((_req, url) => signInPage(url.searchParams.has('signed-out') ? 'You are signed out.' : undefined)),
    )
    .all('/sign-in', notAllowed('GET'))
    .get(
      '/login',
      pageOf((_req, url) => loginLinkPage(deps, url)),
    )
    .post(
      '/login',
      pageOf(async (req) => {
        if (!sameOrigin(deps.config, req))
          return messagePage(403, 'Form expired', 'This form did not come from this site.');
        const form = await readForm(req, deps.config);
        return form instanceof Response ? form : useLoginLink(deps, req, form);
      }),
    )
    .all('/login', notAllowed('GET, POST'))
    .post('/logout', pageOf(signedIn((_req, _url, s) => signOut(deps, s), { anyMode: true })))
    .all('/logout', notAllowed('POST'));
