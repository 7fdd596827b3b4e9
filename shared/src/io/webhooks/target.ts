/**
 * Where a webhook may go (docs/design/webhooks.md): an `https://` URL whose host resolves only to public
 * addresses, checked when the endpoint is created and again before every attempt (DNS can change),
 * and the attempt connects to the address that was checked, so a name that resolves to a public
 * address for the check and to 127.0.0.1 a moment later (DNS rebinding) gains nothing.
 * Port 443 or 8443 only. `WEBHOOK_ALLOW_PRIVATE_URLS=true` allows `http://`, any port and private addresses
 * (local development, tests).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { log } from '../../http';
import { MAX_URL_LENGTH } from '../../schemas/fields';
import { refusedAddress } from './addresses';
import { privateUrlsHint } from './setting';

/** Resolves a host name to its addresses; injectable so tests can play DNS. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The URL's shape, before any lookup: an error in words, or the parsed URL. */
export function parseWebhookUrl(text: string, allowPrivate: boolean): { url: URL } | { error: string } {
  if (text.length > MAX_URL_LENGTH) return { error: `the URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: 'not a URL (it must look like https://hooks.example.com/studio)' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    return {
      error: allowPrivate
        ? 'the URL must start with https:// (or http://, allowed here)'
        : `the URL must start with https://${privateUrlsHint(false)}`,
    };
  // another port of a public host is ssh, a database, an admin page: what a studio may not make us call
  if (!allowPrivate && url.port !== '' && url.port !== '8443')
    return { error: `the port must be 443 (the https default) or 8443${privateUrlsHint(false)}` };
  // the URL is shown in lists and logs; the signature, not a password in the URL, proves who sends
  if (url.username || url.password) return { error: 'the URL must not carry a user name or password' };
  if (url.hash) return { error: 'the URL must not have a #fragment' };
  // stored as written out (percent-encoded, punycode), which may be longer than what was typed
  if (url.href.length > MAX_URL_LENGTH) return { error: `the URL is longer than ${MAX_URL_LENGTH} characters` };
  return { url };
}

export interface CheckedTarget {
  url: URL;
  /** The address to connect to: one the check passed. */
  address: string;
}

/**
 * Resolves the URL's host and checks every address it resolves to: an error in words, or the
 * address to connect to. A host that resolves to any refused address is refused whole: an
 * attacker who controls a name can make it resolve to both.
 */
export async function checkTarget(
  url: URL,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<CheckedTarget | { error: string }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      return { error: `${host} does not resolve (${(err as { code?: string }).code ?? (err as Error).message})` };
    }
    if (!addresses.length) return { error: `${host} does not resolve` };
  }
  if (!allowPrivate) {
    for (const a of addresses) {
      const refused = refusedAddress(a);
      if (!refused) continue;
      if (host === a) return { error: `${a} is not a public address: ${refused}${privateUrlsHint(false)}` };
      // what a name resolves to inside our network is no studio's to learn: the log keeps it, the answer does not
      log('warn', 'webhook URL refused: its host resolves to an address that is not public', {
        host,
        address: a,
        refused,
      });
      return {
        error: `the host ${host} is not a public address: it resolves to a private or reserved one${privateUrlsHint(false)}`,
      };
    }
  }
  return { url, address: addresses[0]! };
}

/** The URL that reaches `address` directly: the checked URL with its host replaced. */
export function urlForAddress(target: CheckedTarget): string {
  const u = new URL(target.url.href);
  u.hostname = isIP(target.address) === 6 ? `[${target.address}]` : target.address;
  return u.href;
}
