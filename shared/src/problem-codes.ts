/** The closed problem+json vocabulary of docs/design/errors.md: each code with its status and title. */
export const PROBLEMS = {
  malformed_json: [400, 'Malformed JSON'],
  malformed_request: [400, 'Malformed request'],
  idempotency_key_required: [400, 'Idempotency-Key required'],
  idempotency_key_invalid: [400, 'Invalid Idempotency-Key'],
  invalid_cursor: [400, 'Invalid cursor'],
  api_key_missing: [401, 'API key missing'],
  api_key_invalid: [401, 'API key invalid'],
  api_key_revoked: [401, 'API key revoked'],
  api_key_wrong_kind: [401, 'Wrong kind of API key'],
  api_key_expired: [401, 'API key expired'],
  gateway_signature_invalid: [401, 'Gateway signature invalid'],
  unauthenticated: [401, 'Not signed in'],
  scope_required: [403, 'Scope required'],
  test_mode_required: [403, 'Test mode required'],
  sandbox_limit_reached: [409, 'Sandbox limit reached'],
  studio_required: [403, 'Studio required'],
  origin_not_allowed: [403, 'Origin not allowed'],
  csrf_failed: [403, 'Form expired'],
  not_found: [404, 'Not found'],
  route_not_found: [404, 'Route not found'],
  site_not_published: [404, 'Site not published'],
  method_not_allowed: [405, 'Method not allowed'],
  request_timeout: [408, 'Request timeout'],
  events_expired: [410, 'Events expired'],
  idempotency_key_reused: [409, 'Idempotency-Key reused'],
  idempotency_request_in_progress: [409, 'Request in progress'],
  instructor_double_booked: [409, 'Instructor double-booked'],
  member_exists: [409, 'Member exists'],
  last_admin: [409, 'Last admin'],
  last_venue: [409, 'Last venue'],
  venue_in_use: [409, 'Venue in use'],
  coupon_code_taken: [409, 'Coupon code taken'],
  occurrence_cancelled: [409, 'Occurrence cancelled'],
  class_cancelled: [409, 'Class cancelled'],
  membership_cancelled: [409, 'Membership cancelled'],
  conflict: [409, 'Conflict'],
  payload_too_large: [413, 'Payload too large'],
  unsupported_media_type: [415, 'Unsupported media type'],
  validation_failed: [422, 'Validation failed'],
  unknown_instructor: [422, 'Unknown instructor'],
  unknown_plan: [422, 'Unknown plan'],
  unknown_location: [422, 'Unknown location'],
  unknown_room: [422, 'Unknown room'],
  unsupported_channel: [422, 'Unsupported channel'],
  occurrence_in_past: [422, 'Occurrence in the past'],
  invalid_role: [422, 'Invalid role'],
  invalid_plan_config: [422, 'Invalid plan config'],
  invalid_coupon_config: [422, 'Invalid coupon config'],
  invalid_price: [422, 'Invalid price'],
  unknown_reference: [422, 'Unknown reference'],
  rate_limited: [429, 'Rate limited'],
  request_headers_too_large: [431, 'Request headers too large'],
  client_closed_request: [499, 'Client closed request'],
  internal_error: [500, 'Internal error'],
  service_unavailable: [503, 'Service unavailable'],
  upstream_timeout: [504, 'Upstream timeout'],
} as const satisfies Record<string, readonly [number, string]>;

export type ProblemCode = keyof typeof PROBLEMS;
export const PROBLEM_CODES = Object.keys(PROBLEMS) as ProblemCode[];
export const statusOf = (code: ProblemCode): number => PROBLEMS[code][0];

/** A problem's `errors` keeps this many entries, then one saying how many more (docs/design/hostile-callers.md). */
export const MAX_PROBLEM_ERRORS = 20;
/**
 * Errors looked for in one value at most: a 1 MiB body can fail its schema half a million times (an array of wrong
 * items past its `maxItems`), and finding them all cost the service about a second. Past this, "at least".
 */
export const MAX_ERRORS_SOUGHT = 1_000;
