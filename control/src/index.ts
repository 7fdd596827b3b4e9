/**
 * `@studio/control`: the administration the dashboard and the operator CLI share (docs/design/dashboard.md): API keys,
 * webhook endpoints and deliveries, and the sign-in links the CLI mints and the dashboard consumes. One entry point:
 * no two of these modules export the same name.
 */
export * from './keys/service';
export * from './signin/links';
export * from './webhooks/deliveries';
export * from './webhooks/endpoints';
