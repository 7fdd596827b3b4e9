import { Elysia } from 'elysia';
import type { DashboardDeps } from '../deps';
import type { Guard } from '../guard';
import { notAllowed, pageOf, pageUnder } from '../routing';
import {
  createWebhook,
  DELIVERY_ID,
  deletedNotice,
  ENDPOINT_ACTIONS,
  ENDPOINT_ID,
  endpointAction,
  endpointView,
  replayWebhookDelivery,
  webhooksPage,
} from './service';

const endpointIds = { endpointId: new RegExp(`^${ENDPOINT_ID}$`) };
const deliveryIds = { ...endpointIds, deliveryId: new RegExp(`^${DELIVERY_ID}$`) };

/**
 * The Webhooks page (`/webhooks`), an endpoint's page with its delivery log (`/webhooks/{endpointId}`), its actions
 * (`/webhooks/{endpointId}/{action}`; roll has a confirmation page) and a delivery's replay.
 */
export function webhooksRoutes(deps: DashboardDeps, signedIn: Guard) {
  const app = new Elysia({ name: 'dashboard:webhooks' })
    .get('/webhooks', pageOf(signedIn((_req, url, s) => webhooksPage(deps, s, { notice: deletedNotice(url) }))))
    .post('/webhooks', pageOf(signedIn((_req, _url, s, form) => createWebhook(deps, s, form!))))
    .all('/webhooks', notAllowed('GET, POST'))
    .get(
      '/webhooks/:endpointId',
      pageUnder(endpointIds, (p) => signedIn((_q, url, s) => endpointView(deps, s, p.endpointId!, url))),
    )
    .all('/webhooks/:endpointId', notAllowed('GET', endpointIds))
    .post(
      '/webhooks/:endpointId/deliveries/:deliveryId/replay',
      pageUnder(deliveryIds, (p) =>
        signedIn((_q, _u, s) => replayWebhookDelivery(deps, s, p.endpointId!, p.deliveryId!)),
      ),
    )
    .all('/webhooks/:endpointId/deliveries/:deliveryId/replay', notAllowed('POST', deliveryIds));
  for (const action of ENDPOINT_ACTIONS) {
    const path = `/webhooks/:endpointId/${action}`;
    const handler = pageUnder(endpointIds, (p) =>
      signedIn((_q, _u, s, form) => endpointAction(deps, s, p.endpointId!, action, form)),
    );
    if (action === 'roll') app.get(path, handler);
    app.post(path, handler).all(path, notAllowed(action === 'roll' ? 'GET, POST' : 'POST', endpointIds));
  }
  return app;
}
