/**
 * `@studio/shared`: the pure domain kit (no connection, no server, nothing that starts on import): the registry,
 * ids and keys, problems and their documents, configuration, HTTP helpers, events, and the small pure modules.
 * The I/O kit is `@studio/shared/io`, the webhook parts `@studio/shared/webhooks`, the TypeBox schemas
 * `@studio/shared/schemas` (docs/design/workspaces.md). Files inside shared import each other by relative path, never
 * through this index.
 */
export * from './apikey';
export * from './base62';
export * from './body';
export * from './broadcasts';
export * from './client-names';
export * from './config';
export * from './database';
export * from './escape-html';
export * from './event-types';
export * from './events';
export * from './http';
export * from './ids';
export * from './openapi';
export * from './operations';
export * from './origins';
export * from './pg-errors';
export * from './problem';
export * from './problem-docs';
export * from './redis-names';
export * from './runtime';
export * from './signing';
export * from './target';
export * from './text-buffer';
export * from './time';
export * from './trace';
export * from './validation';
