import { runService } from '@studio/shared/io';
import { createStorefrontService } from './app';

await runService({
  name: 'storefront-service',
  surface: 'storefront',
  port: 'STOREFRONT_SERVICE_PORT',
  build: createStorefrontService,
});
