/**
 * Origins a publishable key may be used from (docs/design/keys.md, gateway.md): exact origins
 * (`https://lotus.example`, `https://shop.lotus.example:8443`) and one wildcard form,
 * `https://*.lotus.example`, which matches any subdomain of lotus.example (one level or
 * more) but not lotus.example itself. Plain http only for localhost, for development.
 */
const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const LOCAL = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The pattern in its canonical form, or an error message a developer can act on. */
export function parseOriginPattern(input: string): { pattern: string } | { error: string } {
  const text = input.trim().toLowerCase().replace(/\/$/, '');
  const m = /^(https?):\/\/(\*\.)?([^/:?#]+)(:\d{1,5})?$/.exec(text);
  if (!m)
    return {
      error: `"${input}" is not an origin: write scheme and host only, e.g. https://lotus.example or https://*.lotus.example`,
    };
  const [, scheme, wildcard, host, port] = m as unknown as [
    string,
    string,
    string | undefined,
    string,
    string | undefined,
  ];
  if (scheme === 'http' && !LOCAL.has(host))
    return { error: `"${input}": plain http is allowed for localhost only; use https` };
  if (!LOCAL.has(host)) {
    const labels = host.split('.');
    if (labels.length < 2 || !labels.every((l) => HOST_LABEL.test(l)))
      return { error: `"${input}": "${host}" is not a valid host name` };
  }
  if (wildcard && LOCAL.has(host))
    return { error: `"${input}": a wildcard needs a domain, e.g. https://*.lotus.example` };
  if (port && Number(port.slice(1)) > 65535) return { error: `"${input}": port out of range` };
  return { pattern: `${scheme}://${wildcard ?? ''}${host}${port ?? ''}` };
}

/** Origins one key may name. */
export const MAX_ORIGINS = 50;

/** Every pattern parsed, or the first error. An empty list means "any origin" (null). */
export function parseOriginList(inputs: string[]): { origins: string[] | null } | { error: string } {
  const out: string[] = [];
  const given = inputs.map((s) => s.trim()).filter(Boolean);
  // each is checked on every call from a page: a handful of sites (wildcards cover subdomains), not thousands
  if (given.length > MAX_ORIGINS)
    return { error: `at most ${MAX_ORIGINS} origins (a *. pattern covers a site's subdomains)` };
  for (const input of given) {
    const parsed = parseOriginPattern(input);
    if ('error' in parsed) return parsed;
    if (!out.includes(parsed.pattern)) out.push(parsed.pattern);
  }
  return { origins: out.length ? out : null };
}

/** Whether a request's `Origin` is allowed by these patterns (null: any). */
export function originAllowed(patterns: readonly string[] | null, origin: string): boolean {
  if (!patterns) return true;
  const o = origin.toLowerCase();
  for (const p of patterns) {
    if (p === o) return true;
    const star = p.indexOf('://*.');
    if (star < 0) continue;
    // https://*.lotus.example: same scheme, and the host ends with ".lotus.example" (with the same port)
    const scheme = p.slice(0, star + 3);
    const suffix = p.slice(star + 4); // ".lotus.example[:port]"
    if (o.startsWith(scheme) && o.endsWith(suffix) && o.length > scheme.length + suffix.length) {
      const sub = o.slice(scheme.length, o.length - suffix.length);
      if (/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(sub)) return true;
    }
  }
  return false;
}
