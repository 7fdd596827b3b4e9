/** Plain-HTTP helpers for the dashboard tests: sign in like a browser would, read forms' CSRF tokens. */

import { createLoginLink } from '@studio/control';
import type { Stack } from '../../test/harness';

export async function loginLink(s: Stack, studioId: string) {
  const { url } = await createLoginLink(s.sql, s.config, studioId);
  return { url, token: new URL(url).searchParams.get('token')! };
}

export const form = (fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const x of [v].flat()) body.append(k, x);
  return body;
};

export function postForm(
  s: Stack,
  path: string,
  fields: Record<string, string | string[]>,
  cookie?: string,
  headers: Record<string, string> = {},
) {
  return fetch(s.dashboardUrl + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    body: form(fields),
  });
}

export const get = (s: Stack, path: string, cookie?: string) =>
  fetch(s.dashboardUrl + path, { redirect: 'manual', headers: cookie ? { cookie } : {} });

/** Signs in with a fresh login link; returns the `name=value` cookie pair and the page's CSRF token. */
/**
 * A login link used as a browser uses it: its page drawn (which sets the form's proof, a cookie and a field), then
 * its form sent; `times` sends of that one form at once (the answers, in order).
 */
export async function useLink(s: Stack, token: string, times = 1): Promise<Response[]> {
  const landing = await get(s, `/login?token=${encodeURIComponent(token)}`);
  const html = await landing.text();
  const nonce = /name="nonce" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const cookie = (landing.headers.get('set-cookie') ?? '').split(';')[0]!;
  return Promise.all(Array.from({ length: times }, () => postForm(s, '/login', { token, nonce }, cookie)));
}

export async function signIn(s: Stack, studioId: string) {
  const { token } = await loginLink(s, studioId);
  const [res] = (await useLink(s, token)) as [Response];
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const setCookie = res.headers.get('set-cookie')!;
  const cookie = setCookie.split(';')[0]!;
  const page = await (await get(s, '/keys', cookie)).text();
  return { cookie, setCookie, csrf: csrfOf(page) };
}

export function csrfOf(page: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(page);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1]!;
}

export async function keyCount(s: Stack, studioId: string) {
  const [r] = await s.sql<{ n: number }[]>`select count(*)::int as n from api_keys where studio_id = ${studioId}`;
  return r!.n;
}
