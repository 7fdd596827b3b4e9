import { runService } from '@studio/shared/service-main';
import { createManagementService } from './app';

await runService({ name: 'management-service', surface: 'management', port: (c) => c.MANAGEMENT_SERVICE_PORT, build: createManagementService });
