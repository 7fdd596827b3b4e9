/**
 * Which addresses a webhook may not reach (docs/design/webhooks.md): loopback,
 * private, link-local, shared, benchmarking, multicast and reserved ranges, in IPv4 and IPv6,
 * and the IPv4 ones again inside IPv6 (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and 6to4 `2002:aabb:ccdd::/48`), so no spelling of 127.0.0.1
 * gets through. Local-use NAT64 and Teredo are refused whole. Pure.
 */
import { isIP } from 'node:net';

/** [first address as a number, prefix length, name] */
const V4_REFUSED: [number, number, string][] = [
  [0x00000000, 8, '0.0.0.0/8 (this network)'],
  [0x0a000000, 8, '10.0.0.0/8 (private)'],
  [0x64400000, 10, '100.64.0.0/10 (shared address space)'],
  [0x7f000000, 8, '127.0.0.0/8 (loopback)'],
  [0xa9fe0000, 16, '169.254.0.0/16 (link-local)'],
  [0xac100000, 12, '172.16.0.0/12 (private)'],
  [0xc0000000, 24, '192.0.0.0/24 (IETF protocol assignments)'],
  [0xc0a80000, 16, '192.168.0.0/16 (private)'],
  [0xc6120000, 15, '198.18.0.0/15 (benchmarking)'],
  [0xe0000000, 3, '224.0.0.0 and above (multicast and reserved)'],
];

function v4Number(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function refusedV4(n: number): string | null {
  for (const [base, bits, name] of V4_REFUSED) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === base) return name;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (with `::` expanded and a trailing dotted IPv4 read). */
function v6Groups(ip: string): number[] {
  let text = ip.toLowerCase().replace(/%.*$/, ''); // a zone id names an interface, not an address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4Number(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = part(head);
  const t = part(tail);
  return tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill(0), ...t];
}

function refusedV6(g: number[]): string | null {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  /** The IPv4 address in groups `at` and `at + 1`, held to the IPv4 rules: `name` and the range, or null. */
  const embedded = (name: string, at = 6) => {
    const refused = refusedV4(((g[at]! << 16) >>> 0) + g[at + 1]!);
    return refused && `${name} ${refused}`;
  };
  if (zeros(0, 8)) return ':: (unspecified)';
  if (zeros(0, 7) && g[7] === 1) return '::1 (loopback)';
  if (zeros(0, 5) && g[5] === 0xffff) return embedded('IPv4-mapped');
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded('IPv4-translated');
  if (zeros(0, 6)) return embedded('IPv4-compatible');
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded('NAT64 64:ff9b::/96');
  // where the IPv4 address sits in a local-use prefix is the network's choice (RFC 6052: /32 to /96), and none is public
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return '64:ff9b:1::/48 (local-use NAT64)';
  if (g[0] === 0x2002) return embedded('6to4 2002::/16', 1);
  // a tunnel through a NAT (its client's IPv4 address stored inverted): no webhook receiver needs one
  if (g[0] === 0x2001 && g[1] === 0) return '2001::/32 (Teredo)';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'fc00::/7 (unique local)';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'fe80::/10 (link-local)';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'fec0::/10 (site-local)';
  if ((g[0]! & 0xff00) === 0xff00) return 'ff00::/8 (multicast)';
  return null;
}

/**
 * Why a webhook may not be delivered to `ip` (the refused range, in words), or null when it is a
 * public address. Anything that is not an IP address is refused.
 */
export function refusedAddress(ip: string): string | null {
  const bare = ip.replace(/^\[|\]$/g, '');
  const family = isIP(bare.replace(/%.*$/, ''));
  if (family === 4) return refusedV4(v4Number(bare));
  if (family === 6) return refusedV6(v6Groups(bare));
  return 'not an IP address';
}
