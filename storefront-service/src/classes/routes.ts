import { Elysia } from 'elysia';
import { withCaller } from '@studio/shared/service-kit';
import { StorefrontClassList, StorefrontClassQuery } from '@studio/shared/schemas/storefront';
import type { StorefrontDeps } from '../app';
import { cacheable } from '../kit/cacheable';
import { storefrontRoute } from '../kit/docs';
import { listClasses } from './service';

const route = storefrontRoute('storefrontListClasses', 'List upcoming classes', StorefrontClassList, {
  422: 'validation_failed: a filter is malformed (`errors` names it), or `to` is not after `from` or more than 90 days after it',
}, 'Upcoming, non-cancelled occurrences of public classes, ordered by start time; at most 500.');

/** storefrontListClasses. */
export const classRoutes = ({ sql }: StorefrontDeps) =>
  new Elysia({ name: 'storefront-classes' })
    .use(withCaller)
    .get(route.path, async ({ caller, query, request }) => cacheable(request, await listClasses(sql, caller.studioId, query)), {
      detail: route.detail,
      query: StorefrontClassQuery,
    });
