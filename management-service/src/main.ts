import { runService } from '@studio/shared/io';
import { createManagementService } from './app';
import { startEventRetention } from './events/retention';
import { startWebhookDispatcher } from './webhooks/dispatcher';

// the webhook dispatcher runs in every management-service process (docs/design/webhooks.md): replicas share its work through Postgres;
// so does the events retention (docs/design/events.md), one replica at a time under an advisory lock
function background(deps: Parameters<typeof startWebhookDispatcher>[0]) {
  const jobs = [startWebhookDispatcher(deps), startEventRetention(deps.sql)];
  return { stop: async () => void (await Promise.all(jobs.map((j) => j.stop()))) };
}

await runService({
  name: 'management-service',
  surface: 'management',
  port: 'MANAGEMENT_SERVICE_PORT',
  build: createManagementService,
  background,
});
