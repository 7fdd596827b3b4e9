/**
 * `@studio/shared/io`: the I/O kit every process builds on (Postgres, Redis, metrics, serving, readiness, route
 * registration, tracing, broadcasts), kept apart from the pure `@studio/shared` (docs/design/workspaces.md).
 */
export * from './broadcasts/bus';
export * from './db';
export * from './gateway-lock';
export * from './invalidation';
export * from './key-info';
export * from './metrics';
export * from './ops';
export * from './readiness';
export * from './redis';
export * from './register';
export * from './serve';
export * from './service-kit';
export * from './service-main';
export * from './tracing';
