/**
 * @studio/sdk: the Studio API from TypeScript (docs/design/sdk.md). `new Studio({ apiKey })`, methods named from the
 * operations, one idempotency key per write across its retries, `for await` over pages, one error class per status,
 * and webhook verification whose event narrows by `type`.
 */
export {
  type ManagementStudio,
  type StorefrontStudio,
  Studio,
  type StudioConstructor,
  type StudioOptions,
  type Surface,
  type Webhooks,
} from './client.js';
export type { Fetch } from './core.js';
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  type FieldError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  StudioApiError,
  TimeoutError,
  UnprocessableEntityError,
} from './errors.js';
export type { FollowOptions } from './events.js';
export type { components as ManagementComponents } from './generated/management.js';
export type { ManagementResources, ProblemCode, StorefrontResources } from './generated/operations.js';
export type { components as StorefrontComponents } from './generated/storefront.js';
export { Page, PageList, type PagePromise } from './pagination.js';
export type { RequestOptions } from './types.js';
export { VERSION } from './version.js';
export {
  type EventOf,
  type EventType,
  type StudioEvent,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from './webhooks.js';
