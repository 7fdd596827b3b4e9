import type { ProblemCode } from './problem';

/**
 * What causes each problem code and how to fix it: the page every problem `type` links to
 * (`/docs/problems#<code>`). Typed by the closed vocabulary, so a new code cannot ship
 * without its explanation.
 */
export const PROBLEM_DOCS = {
  malformed_json: {
    cause:
      'The request body is not valid JSON, is not UTF-8, is empty where a body is required, holds a string with an unpaired surrogate escape (\\ud800 to \\udfff), or nests arrays and objects more than 32 levels deep.',
    fix: 'Send a JSON object built with a JSON serializer (JSON.stringify, json.dumps); keep nesting shallow.',
  },
  malformed_request: {
    cause:
      'The Host header is not a host name or address with an optional port (it is empty, or holds a space, a slash, a stray bracket or colon), or the request target is not a path.',
    fix: 'Send the request with an HTTP client or library, which writes Host as the name (and port) of the server you call and the target as a path starting with /.',
  },
  idempotency_key_required: {
    cause: 'A Management write (POST, PATCH, DELETE) was sent without an Idempotency-Key header.',
    fix: 'Generate a fresh value (a UUID) per action and send it as Idempotency-Key; reuse it only to retry that same action.',
  },
  idempotency_key_invalid: {
    cause: 'The Idempotency-Key header is empty or longer than 255 characters.',
    fix: 'Send 1 to 255 characters; a UUID is a good choice.',
  },
  invalid_cursor: {
    cause:
      'The cursor was not issued by this API for this list and studio, was altered, or was sent with filters other than the ones it was made with.',
    fix: 'Pass next_cursor exactly as received, with the same filters; to change filters, start again without a cursor.',
  },
  api_key_missing: {
    cause: 'No Authorization header was sent.',
    fix: 'Send Authorization: Bearer <key>: a publishable key (svc_pk_…) on the Storefront surface, a secret key (svc_sk_…) on the Management surface.',
  },
  api_key_invalid: {
    cause: 'The key is malformed, fails its checksum (a typo or a truncated copy), or is not known to the API.',
    fix: 'Copy the whole key again from where you stored it when it was created; if it is lost, create a new one in the dashboard.',
  },
  api_key_revoked: {
    cause: 'The key has been revoked; revocation takes effect at once on every server.',
    fix: 'Create a new key in the dashboard and deploy it in place of the revoked one.',
  },
  api_key_wrong_kind: {
    cause: 'A secret key was sent to the Storefront surface, or a publishable key to the Management surface.',
    fix: 'Use a publishable key (svc_pk_…) in browser code for the Storefront, and a secret key (svc_sk_…) on your server for Management.',
  },
  api_key_expired: {
    cause: 'The key passed its expiresAt: it was rolled (its replacement was created then) or created with an expiry.',
    fix: 'Use the replacement key; roll a key with a grace period (1 hour to 7 days) to switch deployments without an outage.',
  },
  gateway_signature_invalid: {
    cause:
      "A request reached an internal service without the gateway's valid, recent signature: the service ports are not an API.",
    fix: 'Call the public surfaces (the gateway), never a service port directly.',
  },
  unauthenticated: {
    cause: 'The dashboard needs a signed-in session and there is none, or it expired.',
    fix: 'Open a new sign-in link (bun run admin login-link --studio <id>, or your host platform).',
  },
  scope_required: {
    cause:
      'The secret key does not hold the scope this operation needs; requiredScope in the body names it (*:read: any one read scope, such as classes:read, as the events operations need).',
    fix: "Create a secret key with that scope in the dashboard (Keys, Create a key) and use it for this operation. Rolling a key does not help: the new key keeps the old one's scopes.",
  },
  test_mode_required: {
    cause:
      "The operation works on a sandbox (test mode), and the key is a live key: a live key reaches the studio's real data and may never reset it.",
    fix: 'Call it with a test secret key (svc_sk_test_…) of the sandbox to reset, holding sandbox:write: bun run admin key:create --studio <id> --sandbox default --kind secret --scopes all, or the dashboard in test mode.',
  },
  sandbox_limit_reached: {
    cause: 'The studio has five sandboxes already, the most it may have.',
    fix: 'Delete a sandbox you no longer use (the dashboard in test mode, Sandboxes), or reset one and reuse it.',
  },
  studio_required: {
    cause: 'The key belongs to a studio that has been deleted.',
    fix: 'Use a key of an existing studio.',
  },
  origin_not_allowed: {
    cause:
      "The publishable key is restricted to some websites, and this request's Origin header (the page that made it) is not one of them.",
    fix: "Call from one of the key's allowed origins, or add this origin to the key in the dashboard (Keys, then the key's Websites button). Requests without an Origin header (server-side) are not restricted.",
  },
  csrf_failed: {
    cause: 'A dashboard form was out of date, came from another site, or its page was open across a sign-out.',
    fix: 'Reload the page and submit the form again.',
  },
  not_found: {
    cause:
      "No record with this id exists in the key's studio: it never existed, was deleted, belongs to another studio, or the id is not one of ours (wrong prefix or characters).",
    fix: "Check the id (records are read with the id from their Location header or a list), and that you use the right studio's key.",
  },
  route_not_found: {
    cause: 'No operation has this path on this surface.',
    fix: 'Check the path against the reference at /docs; paths start with /v1/.',
  },
  site_not_published: {
    cause: 'The studio has not published its public site yet.',
    fix: 'Publish the site (bun run admin site:publish), or render without it until it is published.',
  },
  method_not_allowed: {
    cause:
      'The path exists, but not with this method; the Allow header lists the methods it accepts. The Storefront surface is read-only.',
    fix: 'Use one of the methods in Allow; writes go to the Management surface.',
  },
  request_timeout: {
    cause:
      'The request body did not arrive in full within 60 s (REQUEST_BODY_TIMEOUT_MS) of the gateway starting to read it: the bytes came too slowly, or stopped. Nothing was sent to the service, and the answer closes the connection.',
    fix: 'Send the whole body at once (no operation needs more than a few KB); on a slow link, retry the call. A Management write with the same Idempotency-Key is safe to repeat.',
  },
  events_expired: {
    cause:
      'The after parameter of GET /v1/events names an event that the 30-day retention has already deleted: the events recorded between it and the oldest one kept are gone, so resuming from it would skip them silently.',
    fix: 'Resync what you keep from the lists (GET /v1/classes, /v1/members, …), then resume the feed from its current end: read GET /v1/events without after up to the last page and keep the last event id. Poll more often than every 30 days, or receive webhooks.',
  },
  idempotency_key_reused: {
    cause: 'This Idempotency-Key was already used for a different request (another method, path or body).',
    fix: 'Use a fresh key for each new action; reuse a key only to retry the exact same request.',
  },
  idempotency_request_in_progress: {
    cause: 'The first request with this Idempotency-Key is still running.',
    fix: "Retry after Retry-After seconds; you will get that request's answer.",
  },
  instructor_double_booked: {
    cause:
      'The instructor already teaches a live occurrence at an overlapping time; conflictingOccurrence names it. Nothing was created or changed.',
    fix: 'Pick another time or instructor, or reschedule or cancel the conflicting occurrence first.',
  },
  member_exists: {
    cause: 'A membership of the studio (not cancelled) already has this e-mail, in any letter case.',
    fix: 'Update the existing member instead of inviting again.',
  },
  last_admin: {
    cause: 'The change would leave the studio without an active admin.',
    fix: 'Make another member an active admin first.',
  },
  last_venue: {
    cause: "The location is the studio's last live one.",
    fix: 'Create another location before deleting this one.',
  },
  class_cancelled: {
    cause: 'The class was cancelled (DELETE): a cancelled class, and its occurrences, are final.',
    fix: 'Create a new class for the same slot; the cancelled one stays readable as it was.',
  },
  membership_cancelled: {
    cause: 'The membership was cancelled: a cancelled membership is final, its name and role included.',
    fix: 'Invite the e-mail address again for a new membership.',
  },
  venue_in_use: {
    cause: 'Live occurrences still to come are held in the location (in any of its rooms) or the room being deleted.',
    fix: 'Cancel the classes of those occurrences (DELETE /v1/classes/{classId}), or delete the venue once they have taken place; the detail names the next one.',
  },
  coupon_code_taken: {
    cause: 'An active coupon of the studio already has this code (codes compare without letter case).',
    fix: 'Choose another code, or archive the existing coupon first.',
  },
  occurrence_cancelled: {
    cause: 'The occurrence has been cancelled and cannot be rescheduled.',
    fix: 'Create a new class or occurrence instead.',
  },
  conflict: {
    cause: "The request conflicts with a record that already exists (a uniqueness rule of the studio's data).",
    fix: 'Read the existing record and update it, or change the value that must be unique.',
  },
  payload_too_large: {
    cause: 'The request body is larger than 1 MiB.',
    fix: 'Send less per request; no operation needs a body that large.',
  },
  unsupported_media_type: {
    cause: 'A write body was sent with a Content-Type other than application/json (form encodings are not accepted).',
    fix: 'Send Content-Type: application/json with a JSON body.',
  },
  validation_failed: {
    cause:
      'A field of the body or query is missing, unknown, of the wrong type, out of range, or not in the expected format; errors lists each one with a JSON Pointer (/body/startsAt) and what it must be.',
    fix: "Correct each field listed in errors; the reference at /docs shows every field's rules and an example.",
  },
  unknown_instructor: {
    cause: 'instructorId is not an active instructor of this studio.',
    fix: 'Use the id of an active instructor (GET /v1/instructors), or create one first.',
  },
  unknown_plan: {
    cause: 'One of planIds is not an active plan of this studio.',
    fix: 'Use ids of active plans (GET /v1/plans).',
  },
  unknown_location: {
    cause: 'locationId is not a live location of this studio.',
    fix: 'Use the id of a live location (GET /v1/locations).',
  },
  unknown_room: {
    cause: 'roomId is not a live room of this studio, or not a room of the given locationId.',
    fix: 'Use a room of that location (GET /v1/locations/{locationId}/rooms).',
  },
  unsupported_channel: {
    cause: 'The class mode is not enabled for this studio.',
    fix: "Use one of the studio's enabledModes (Storefront GET /v1/config), or ask the studio's operator to enable the mode.",
  },
  occurrence_in_past: {
    cause: 'The start time is not in the future, or the occurrence to move has already started (it stays as history).',
    fix: 'Send a future startsAt, with its offset (e.g. 2026-12-01T18:00:00Z).',
  },
  invalid_role: {
    cause: 'The role is not one of admin, manager, instructor, front_desk, member.',
    fix: 'Send one of those roles.',
  },
  invalid_plan_config: {
    cause: 'The plan config has a missing, extra or out-of-range field for the plan type; errors lists them.',
    fix: "Send the config fields of the plan type (see the operation's description) and nothing else.",
  },
  invalid_coupon_config: {
    cause:
      'The coupon config is not { kind: "percent", percentOff: 1..100 } or { kind: "amount", amountOffCents ≥ 1, currency }.',
    fix: 'Send one of those two shapes; errors names the field to change.',
  },
  invalid_price: {
    cause: 'A paid program lacks a positive priceCents and a currency, or a free one has a price.',
    fix: 'For paid, send priceCents > 0 and currency; for free, send neither (null both when switching a paid program to free).',
  },
  unknown_reference: {
    cause: 'The request refers to a record that does not exist in this studio.',
    fix: "Check the ids in the body against the studio's records.",
  },
  rate_limited: {
    cause:
      "The key (and, for a publishable key, the visitor's address) sent more requests than its limit; the RateLimit headers show it.",
    fix: 'Wait Retry-After seconds, then slow down: spread requests, cache Storefront answers (a 200 carries an ETag: send it back in If-None-Match for a bodiless 304), or ask for a higher limit.',
  },
  request_headers_too_large: {
    cause:
      'The request target and the headers the gateway passes on to the service (Accept, Content-Type, If-None-Match, Idempotency-Key, tracestate) come to more than 16 KiB with the headers the gateway adds. Other headers are not passed on and do not count. A request line and headers over 16 KiB as sent are refused before this, with a bare 431.',
    fix: 'Send shorter values: no operation needs a header or a query string of that size.',
  },
  client_closed_request: {
    cause:
      'The client closed the connection before the request body arrived in full (an aborted upload or a dropped connection); nothing was sent to the service. No client ever reads this answer: it is what the activity log records.',
    fix: 'Nothing to fix on the API side. If your client aborts uploads (a timeout shorter than the upload takes, a page closed mid-request), retry the call; a Management write with the same Idempotency-Key is safe to repeat.',
  },
  internal_error: {
    cause: 'Something failed on our side.',
    fix: 'Retry later; if it persists, report the request id from instance or X-Request-Id.',
  },
  service_unavailable: {
    cause: 'A service, the database or the cache is unreachable for a moment. No write was applied.',
    fix: 'Retry after Retry-After seconds (with the same Idempotency-Key for writes).',
  },
  upstream_timeout: {
    cause: "A service did not answer within the gateway's time limit (10 seconds unless the operator set another).",
    fix: 'Retry with the same Idempotency-Key: a write that did complete is replayed, not repeated.',
  },
} satisfies Record<ProblemCode, { cause: string; fix: string }>;
