/**
 * THE operations table. Gateway routing, scope checks, activity labels, the
 * services' route registration and the OpenAPI documents all read it; a test
 * walks it. Paths use OpenAPI `{param}` syntax.
 */
export const SCOPES = [
  'classes:read', 'classes:write', 'content:read', 'content:write',
  'coupons:read', 'coupons:write', 'instructors:read', 'instructors:write',
  'locations:read', 'locations:write', 'members:read', 'members:write',
  'plans:read', 'plans:write', 'programs:read', 'programs:write',
  'schedule:read', 'schedule:write',
] as const;
export type Scope = (typeof SCOPES)[number];
export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

export type Surface = 'storefront' | 'management';
export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface Operation {
  readonly id: string;
  readonly surface: Surface;
  readonly method: Method;
  readonly path: string;
  /** null on the Storefront surface, which needs only a publishable key. */
  readonly scope: Scope | null;
  /** Cursor-paginated per the specification. */
  readonly paginated?: true;
}

const sf = (id: string, path: string): Operation => ({ id, surface: 'storefront', method: 'GET', path, scope: null });
const mg = (id: string, method: Method, path: string, scope: Scope, paginated?: true): Operation =>
  paginated ? { id, surface: 'management', method, path, scope, paginated } : { id, surface: 'management', method, path, scope };

export const OPERATIONS = [
  sf('storefrontGetConfig', '/v1/config'),
  sf('storefrontGetSite', '/v1/site'),
  sf('storefrontListClasses', '/v1/classes'),
  sf('storefrontListInstructors', '/v1/instructors'),
  sf('storefrontListPlans', '/v1/plans'),
  sf('storefrontGetPolicies', '/v1/policies'),

  mg('managementListClasses', 'GET', '/v1/classes', 'classes:read', true),
  mg('managementCreateClass', 'POST', '/v1/classes', 'classes:write'),
  mg('managementUpdateClass', 'PATCH', '/v1/classes/{classId}', 'classes:write'),
  mg('managementCancelClass', 'DELETE', '/v1/classes/{classId}', 'classes:write'),
  mg('managementListMembers', 'GET', '/v1/members', 'members:read', true),
  mg('managementInviteMember', 'POST', '/v1/members/invites', 'members:write'),
  mg('managementUpdateMember', 'PATCH', '/v1/members/{membershipId}', 'members:write'),
  mg('managementCancelMembership', 'POST', '/v1/members/{membershipId}/cancel', 'members:write'),
  mg('managementListSchedule', 'GET', '/v1/schedule', 'schedule:read', true),
  mg('managementRescheduleOccurrence', 'PATCH', '/v1/schedule/{occurrenceId}', 'schedule:write'),
  mg('managementUpdateContent', 'PATCH', '/v1/content/{contentId}', 'content:write'),
  mg('managementDeleteContent', 'DELETE', '/v1/content/{contentId}', 'content:write'),
  mg('managementCreatePlan', 'POST', '/v1/plans', 'plans:write'),
  mg('managementUpdatePlan', 'PATCH', '/v1/plans/{planId}', 'plans:write'),
  mg('managementArchivePlan', 'DELETE', '/v1/plans/{planId}', 'plans:write'),
  mg('managementCreateInstructor', 'POST', '/v1/instructors', 'instructors:write'),
  mg('managementUpdateInstructor', 'PATCH', '/v1/instructors/{instructorId}', 'instructors:write'),
  mg('managementCreateLocation', 'POST', '/v1/locations', 'locations:write'),
  mg('managementUpdateLocation', 'PATCH', '/v1/locations/{locationId}', 'locations:write'),
  mg('managementDeleteLocation', 'DELETE', '/v1/locations/{locationId}', 'locations:write'),
  mg('managementCreateRoom', 'POST', '/v1/locations/{locationId}/rooms', 'locations:write'),
  mg('managementUpdateRoom', 'PATCH', '/v1/locations/{locationId}/rooms/{roomId}', 'locations:write'),
  mg('managementDeleteRoom', 'DELETE', '/v1/locations/{locationId}/rooms/{roomId}', 'locations:write'),
  mg('managementCreateCoupon', 'POST', '/v1/coupons', 'coupons:write'),
  mg('managementArchiveCoupon', 'DELETE', '/v1/coupons/{couponId}', 'coupons:write'),
  mg('managementCreateProgram', 'POST', '/v1/programs', 'programs:write'),
  mg('managementUpdateProgram', 'PATCH', '/v1/programs/{programId}', 'programs:write'),

  // The eight Management reads the specification lists without an operationId.
  mg('managementListContent', 'GET', '/v1/content', 'content:read'),
  mg('managementListCoupons', 'GET', '/v1/coupons', 'coupons:read'),
  mg('managementListInstructors', 'GET', '/v1/instructors', 'instructors:read'),
  mg('managementListLocations', 'GET', '/v1/locations', 'locations:read'),
  mg('managementListRooms', 'GET', '/v1/locations/{locationId}/rooms', 'locations:read'),
  mg('managementListPlans', 'GET', '/v1/plans', 'plans:read'),
  mg('managementListPrograms', 'GET', '/v1/programs', 'programs:read'),
  mg('managementGetProgram', 'GET', '/v1/programs/{programId}', 'programs:read'),
] as const satisfies readonly Operation[];

export type OperationId = (typeof OPERATIONS)[number]['id'];

const byId = new Map<string, Operation>(OPERATIONS.map((o) => [o.id, o]));
export function operation(id: OperationId): Operation {
  return byId.get(id)!;
}
export const operationsOf = (surface: Surface): Operation[] => OPERATIONS.filter((o) => o.surface === surface);

/** `/v1/classes/{classId}` -> `/v1/classes/:classId` for Elysia. */
export const elysiaPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');
