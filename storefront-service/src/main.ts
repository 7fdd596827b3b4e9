import { runService } from '@studio/shared/io/service-main';
import { createStorefrontService } from './app';

await runService({
  name: 'storefront-service',
  surface: 'storefront',
  port: 'STOREFRONT_SERVICE_PORT',
  build: createStorefrontService,
});
