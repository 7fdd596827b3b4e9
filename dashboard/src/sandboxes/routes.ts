import { Elysia } from 'elysia';
import type { DashboardDeps } from '../deps';
import type { Guard } from '../guard';
import { notAllowed, pageOf, pageUnder } from '../routing';
import {
  createSandboxAction,
  deleteAction,
  renameAction,
  resetAction,
  sandboxesPage,
  sandboxNotice,
  switchMode,
  useSandbox,
} from './service';

export const SANDBOX_ACTIONS = ['use', 'rename', 'reset', 'delete'] as const;
const ids = { sandboxId: /^std_[0-9A-Za-z]{1,64}$/ };

/**
 * Test mode: the header's switch (`POST /mode`), the Sandboxes page (`/sandboxes`) and each sandbox's actions
 * (`/sandboxes/{sandboxId}/{action}`; rename has a page of its own). The switch and Use take a form drawn in either
 * mode; every other form only in the mode it was drawn in (guard.ts).
 */
export function sandboxesRoutes(deps: DashboardDeps, signedIn: Guard) {
  const app = new Elysia({ name: 'dashboard:sandboxes' })
    .post('/mode', pageOf(signedIn((_req, _url, s, form) => switchMode(deps, s, form!), { anyMode: true })))
    .all('/mode', notAllowed('POST'))
    .get(
      '/sandboxes',
      pageOf(signedIn(async (_req, url, s) => sandboxesPage(deps, s, { notice: await sandboxNotice(deps, s, url) }))),
    )
    .post('/sandboxes', pageOf(signedIn((_req, _url, s, form) => createSandboxAction(deps, s, form!))))
    .all('/sandboxes', notAllowed('GET, POST'))
    .post(
      '/sandboxes/:sandboxId/use',
      pageUnder(ids, (p) => signedIn((_q, _u, s) => useSandbox(deps, s, p.sandboxId!), { anyMode: true })),
    )
    .all('/sandboxes/:sandboxId/use', notAllowed('POST', ids))
    .get(
      '/sandboxes/:sandboxId/rename',
      pageUnder(ids, (p) => signedIn((_q, _u, s) => renameAction(deps, s, p.sandboxId!, null))),
    )
    .post(
      '/sandboxes/:sandboxId/rename',
      pageUnder(ids, (p) => signedIn((_q, _u, s, form) => renameAction(deps, s, p.sandboxId!, form))),
    )
    .all('/sandboxes/:sandboxId/rename', notAllowed('GET, POST', ids));
  for (const [action, run] of [
    ['reset', resetAction],
    ['delete', deleteAction],
  ] as const) {
    const path = `/sandboxes/:sandboxId/${action}`;
    app
      .post(
        path,
        pageUnder(ids, (p) => signedIn((_q, _u, s, form) => run(deps, s, p.sandboxId!, form!))),
      )
      .all(path, notAllowed('POST', ids));
  }
  return app;
}
