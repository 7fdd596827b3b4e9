import type { Handler } from './guard';
import { messagePage } from './html';

/** What an Elysia route of the dashboard hands a page: the request, its URL and the path's parameters. */
interface RouteContext {
  request: Request;
  params?: Record<string, string>;
}

/** An Elysia handler of a page. */
export const pageOf =
  (h: Handler) =>
  ({ request }: RouteContext) =>
    h(request, new URL(request.url));

export const notFound = () => messagePage(404, 'Page not found', 'There is no page at this address.');

/**
 * An Elysia handler of a page under an id (`/keys/{keyId}/…`): an id not of its form is no page (404, as any other
 * unknown path), checked before the session is.
 */
export const pageUnder =
  (ids: Record<string, RegExp>, h: (params: Record<string, string>) => Handler) =>
  ({ request, params = {} }: RouteContext) =>
    Object.entries(ids).every(([name, re]) => re.test(params[name] ?? ''))
      ? h(params)(request, new URL(request.url))
      : notFound();

/** The answer to a method a page does not take: 405 naming those it does (a path whose ids are not of their form: 404). */
export const notAllowed =
  (allow: string, ids: Record<string, RegExp> = {}) =>
  ({ params = {} }: RouteContext) => {
    if (!Object.entries(ids).every(([name, re]) => re.test(params[name] ?? ''))) return notFound();
    const res = messagePage(405, 'Method not allowed', 'This page does not accept that kind of request.');
    res.headers.set('allow', allow);
    return res;
  };
