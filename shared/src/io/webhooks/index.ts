/**
 * `@studio/shared/webhooks`: what the dispatcher (management-service) and the administration (`@studio/control`)
 * share about webhooks: endpoint and delivery rows, secrets, where a webhook may go, the body and the retry schedule
 * (docs/design/webhooks.md).
 */
export * from './addresses';
export * from './body';
export * from './deliveries';
export * from './endpoints';
export * from './schedule';
export * from './secrets';
export * from './setting';
export * from './target';
