/**
 * Webhook endpoints (docs/design/webhooks.md): where one may point (https, public addresses only, at creation
 * and again at each delivery, connecting to the address that was checked), at most 16 a studio,
 * chosen event types, and a signing secret shown once and stored encrypted, bound to its endpoint.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createEndpoint, listEndpoints, MAX_ENDPOINTS_PER_STUDIO, webhookContext } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { AppError } from '@studio/shared';
import type { Resolver } from '@studio/shared/webhooks';
import {
  createSecretBox,
  type EndpointRow,
  parseRetrySchedule,
  privateUrlsHint,
  refusedAddress,
  retryDelay,
  secretBytes,
  signatureHeader,
  signingSecrets,
} from '@studio/shared/webhooks';
import { firstBytes } from '../../management-service/src/webhooks/send';
import { freshDatabase, recordEvent, startReceiver, type TestDatabase, until } from './helpers';

/** What a refusal the private-URL setting would lift adds: the setting's name. */
const HINT = privateUrlsHint(false);

let db: TestDatabase;
beforeAll(async () => (db = await freshDatabase()));
afterAll(() => db.close());

/** DNS as the test says: each name to its addresses (changed by assigning). */
function fakeDns(names: Record<string, string[]>): Resolver & { names: Record<string, string[]>; calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    const found = resolve.names[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  resolve.names = names;
  resolve.calls = calls;
  return resolve;
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return `${(e as AppError).code}: ${(e as AppError).message}`;
  }
  throw new Error('expected a refusal');
}

describe('addresses', () => {
  test('every refused range of docs/design/webhooks.md is refused, in each spelling; public addresses pass', () => {
    const refused = [
      '0.0.0.0',
      '0.1.2.3',
      '10.0.0.1',
      '10.255.255.255',
      '100.64.0.1',
      '100.127.255.254',
      '127.0.0.1',
      '127.1.2.3',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.0.0.8',
      '192.168.1.1',
      '198.18.0.1',
      '198.19.255.255',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      '0:0:0:0:0:0:0:1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'fe80::1%eth0',
      'febf::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::127.0.0.1',
      '64:ff9b::a00:1',
      '64:ff9b::c0a8:101',
      '::127.0.0.1',
      '[::1]',
      'localhost',
      'not-an-ip',
    ];
    for (const a of refused) expect([a, refusedAddress(a)]).toEqual([a, expect.any(String)]);
    const allowed = [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.0.1.1',
      '192.169.0.1',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2001:4860:4860::8888',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '[2606:4700::1]',
    ];
    for (const a of allowed) expect([a, refusedAddress(a)]).toEqual([a, null]);
    expect(refusedAddress('::ffff:127.0.0.1')).toBe('IPv4-mapped 127.0.0.0/8 (loopback)');
    expect(refusedAddress('64:ff9b::a00:1')).toBe('NAT64 64:ff9b::/96 10.0.0.0/8 (private)');
  });

  test('IPv4 inside translation and tunnel prefixes: decoded and held to the IPv4 rules, or the prefix refused whole', () => {
    // [address, what refusedAddress says]: 127.0.0.1, 10.0.0.1 and 8.8.8.8 in each
    const cases: [string, string | null][] = [
      // IPv4-translated ::ffff:0:0/96 (RFC 2765), not the IPv4-mapped ::ffff:a.b.c.d
      ['::ffff:0:127.0.0.1', 'IPv4-translated 127.0.0.0/8 (loopback)'],
      ['::ffff:0:7f00:1', 'IPv4-translated 127.0.0.0/8 (loopback)'],
      ['::ffff:0:10.0.0.1', 'IPv4-translated 10.0.0.0/8 (private)'],
      ['::ffff:0:8.8.8.8', null],
      // 6to4 2002::/16 (RFC 3056): the IPv4 address in bits 16-48, then any subnet and interface
      ['2002:7f00:1::', '6to4 2002::/16 127.0.0.0/8 (loopback)'],
      ['2002:7f00:1:1::1', '6to4 2002::/16 127.0.0.0/8 (loopback)'],
      ['2002:a00:1::1', '6to4 2002::/16 10.0.0.0/8 (private)'],
      ['2002:a9fe:a9fe::', '6to4 2002::/16 169.254.0.0/16 (link-local)'],
      ['2002:808:808::1', null],
      // local-use NAT64 64:ff9b:1::/48 (RFC 8215): refused whole, wherever in it the IPv4 address sits
      ['64:ff9b:1::7f00:1', '64:ff9b:1::/48 (local-use NAT64)'],
      ['64:ff9b:1::127.0.0.1', '64:ff9b:1::/48 (local-use NAT64)'],
      ['64:ff9b:1:7f00:0:1::', '64:ff9b:1::/48 (local-use NAT64)'],
      ['64:ff9b:1::a00:1', '64:ff9b:1::/48 (local-use NAT64)'],
      ['64:ff9b:1::808:808', '64:ff9b:1::/48 (local-use NAT64)'],
      // Teredo 2001::/32 (RFC 4380): refused whole (the client's IPv4 address is stored inverted in the last 32 bits)
      ['2001:0:4136:e378:8000:63bf:80ff:fffe', '2001::/32 (Teredo)'],
      ['2001::80ff:fffe', '2001::/32 (Teredo)'],
      ['2001:0:4136:e378:8000:63bf:f5ff:fffe', '2001::/32 (Teredo)'],
      ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', '2001::/32 (Teredo)'],
      // their neighbours are ordinary public addresses
      ['2001:4860:4860::8888', null],
      ['2001:1::1', null],
      ['2003::1', null],
      ['64:ff9b:2::7f00:1', null],
      ['::fffe:0:7f00:1', null],
    ];
    for (const [a, says] of cases) expect([a, refusedAddress(a)]).toEqual([a, says]);
  });
});

describe('creating endpoints', () => {
  test('https and public addresses only, unless WEBHOOK_ALLOW_PRIVATE_URLS=true; names are resolved and every address checked', async () => {
    const { id: studioId } = await db.studio();
    const dns = fakeDns({
      'hooks.example.com': ['93.184.216.34'],
      'internal.example.com': ['10.0.0.7'],
      'split.example.com': ['93.184.216.34', '127.0.0.1'],
    });
    const strict = webhookContext(db.sql, { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: false }, dns);
    const create = (url: string) => refusal(createEndpoint(strict, { studioId, url }));
    expect(await create('http://hooks.example.com/x')).toBe(
      `validation_failed: the URL must start with https://${HINT}`,
    );
    expect(await create('ftp://hooks.example.com/x')).toBe(
      `validation_failed: the URL must start with https://${HINT}`,
    );
    expect(await create('hooks.example.com/x')).toMatch(/^validation_failed: not a URL/);
    expect(await create('https://user:pw@hooks.example.com/x')).toBe(
      'validation_failed: the URL must not carry a user name or password',
    );
    expect(await create(`https://hooks.example.com/${'x'.repeat(2048)}`)).toMatch(/longer than 2048/);
    expect(await create('https://127.0.0.1/x')).toBe(
      `validation_failed: 127.0.0.1 is not a public address: 127.0.0.0/8 (loopback)${HINT}`,
    );
    expect(await create('https://[::1]/x')).toMatch(/::1 is not a public address/);
    expect(await create('https://[::ffff:7f00:1]/x')).toMatch(/IPv4-mapped 127\.0\.0\.0\/8/);
    expect(await create('https://[64:ff9b::a9fe:a9fe]/x')).toMatch(/NAT64 .*169\.254\.0\.0\/16/);
    expect(await create('https://169.254.169.254/latest/meta-data')).toMatch(/link-local/);
    // what a name resolves to inside our network is for the log, never for the studio
    expect(await create('https://internal.example.com/x')).toBe(
      'validation_failed: the host internal.example.com is not a public address: it resolves to a private or reserved one' +
        HINT,
    );
    expect(await create('https://split.example.com/x')).toBe(
      'validation_failed: the host split.example.com is not a public address: it resolves to a private or reserved one' +
        HINT,
    );
    expect(await create('https://nowhere.example.com/x')).toMatch(
      /nowhere\.example\.com does not resolve \(ENOTFOUND\)/,
    );
    const ok = await createEndpoint(strict, { studioId, url: 'https://hooks.example.com/studio?x=1' });
    expect(ok.endpoint).toMatchObject({
      url: 'https://hooks.example.com/studio?x=1',
      events: null,
      enabled: true,
      disabledReason: null,
    });
    expect((await createEndpoint(strict, { studioId, url: 'https://203.0.113.7:8443/x' })).endpoint.url).toBe(
      'https://203.0.113.7:8443/x',
    );
    expect((await createEndpoint(strict, { studioId, url: 'https://203.0.113.7:443/y' })).endpoint.url).toBe(
      'https://203.0.113.7/y',
    );
    // any other port of a public host (ssh, a database, an admin page) is no webhook receiver's
    for (const url of ['https://203.0.113.8:22/', 'https://hooks.example.com:80/x', 'https://[2001:db8::1]:5432/x'])
      expect([url, await create(url)]).toEqual([
        url,
        `validation_failed: the port must be 443 (the https default) or 8443${HINT}`,
      ]);
    for (const port of [1, 444, 8080, 8444, 65535])
      expect(await create(`https://203.0.113.7:${port}/x`)).toBe(
        `validation_failed: the port must be 443 (the https default) or 8443${HINT}`,
      );

    const lax = webhookContext(db.sql, { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: true }, dns);
    expect((await createEndpoint(lax, { studioId, url: 'http://127.0.0.1:9/x' })).endpoint.url).toBe(
      'http://127.0.0.1:9/x',
    );
    expect((await createEndpoint(lax, { studioId, url: 'https://internal.example.com/x' })).endpoint.url).toBe(
      'https://internal.example.com/x',
    );
    expect((await createEndpoint(lax, { studioId, url: 'https://203.0.113.7:22/x' })).endpoint.url).toBe(
      'https://203.0.113.7:22/x',
    );
  });

  test('checked again at each delivery: a name that now resolves to a private address is not called; the address checked is the one connected to', async () => {
    const { id: studioId } = await db.studio();
    const r = startReceiver();
    try {
      const dns = fakeDns({ 'rebind.example.test': ['93.184.216.34'] });
      // created while the name pointed at a public address; then it points at 127.0.0.1 (port 443: the receiver's
      // own port is one private URLs alone may name)
      const strict = webhookContext(db.sql, { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: false }, dns);
      const { endpoint } = await createEndpoint(strict, { studioId, url: 'https://rebind.example.test/hooks' });
      dns.names['rebind.example.test'] = ['127.0.0.1'];
      const d = createDispatcher({
        sql: db.sql,
        config: { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: false },
        resolve: dns,
        pollMs: 100,
        retryScheduleMs: [],
      });
      d.start();
      try {
        const eventId = await recordEvent(db.sql, studioId);
        await until(
          async () =>
            (await db.sql`select 1 from webhook_deliveries where event_id = ${eventId} and status = 'failed'`)
              .length === 1,
          5_000,
          'the refused attempt',
        );
        const [attempt] =
          await db.sql`select a.* from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.event_id = ${eventId}`;
        expect(attempt).toMatchObject({
          statusCode: null,
          error:
            'not sent: the host rebind.example.test is not a public address: it resolves to a private or reserved one' +
            HINT,
        });
        expect(r.received).toEqual([]);
        await db.sql`delete from webhook_endpoints where id = ${endpoint.id}`;
      } finally {
        await d.stop();
      }

      // allowed private addresses: the request goes to the address the check resolved (the system's DNS does not know this name), Host kept
      const lax = webhookContext(db.sql, { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: true }, dns);
      dns.names['hooks.example.test'] = ['127.0.0.1'];
      await createEndpoint(lax, { studioId, url: `http://hooks.example.test:${r.port}/hooks` });
      const d2 = createDispatcher({
        sql: db.sql,
        config: { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: true },
        resolve: dns,
        pollMs: 100,
      });
      d2.start();
      try {
        const calls = dns.calls.length;
        const eventId = await recordEvent(db.sql, studioId);
        await until(() => r.of(eventId).length === 1, 5_000, 'the delivery');
        expect(r.of(eventId)[0]!.headers.host).toBe(`hooks.example.test:${r.port}`);
        expect(dns.calls.slice(calls)).toEqual(['hooks.example.test']); // resolved once, for the check: the connection used its answer
      } finally {
        await d2.stop();
      }
    } finally {
      r.stop();
    }
  });

  test('event types: all (null) or a checked list', async () => {
    const { id: studioId } = await db.studio();
    const ctx = webhookContext(db.sql, { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: true });
    const e = await createEndpoint(ctx, {
      studioId,
      url: 'http://127.0.0.1:9/a',
      events: ['plan.created', ' class.created ', 'plan.created'],
    });
    expect(e.endpoint.events).toEqual(['class.created', 'plan.created']);
    expect(
      (await createEndpoint(ctx, { studioId, url: 'http://127.0.0.1:9/b', events: [] })).endpoint.events,
    ).toBeNull();
    expect(
      await refusal(createEndpoint(ctx, { studioId, url: 'http://127.0.0.1:9/c', events: ['class.exploded'] })),
    ).toMatch(/^validation_failed: unknown event type class\.exploded; the types are class\.created, /);
    expect(
      await refusal(createEndpoint(ctx, { studioId, url: 'http://127.0.0.1:9/c', events: ['webhook.test'] })),
    ).toMatch(/unknown event type webhook\.test/);
    expect(await refusal(createEndpoint(ctx, { studioId: 'std_nope', url: 'http://127.0.0.1:9/c' }))).toBe(
      'not_found: no studio std_nope',
    );
  });

  test('at most 16 a studio, however many creates race', async () => {
    const { id: studioId } = await db.studio();
    const ctx = webhookContext(db.sql, { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: true });
    const results = await Promise.allSettled(
      Array.from({ length: 24 }, (_, i) => createEndpoint(ctx, { studioId, url: `http://127.0.0.1:9/${i}` })),
    );
    expect(results.filter((x) => x.status === 'fulfilled')).toHaveLength(MAX_ENDPOINTS_PER_STUDIO);
    const refused = results
      .filter((x): x is PromiseRejectedResult => x.status === 'rejected')
      .map((x) => (x.reason as AppError).message);
    expect(new Set(refused)).toEqual(new Set(['a studio has at most 16 webhook endpoints; delete one first']));
    expect(await listEndpoints(db.sql, studioId)).toHaveLength(16);
  });
});

describe('secrets', () => {
  test('shown once as whsec_ + base64 of 32 bytes; stored only encrypted, bound to its endpoint, under a named key', async () => {
    const { id: studioId } = await db.studio();
    const ctx = webhookContext(db.sql, { ...db.config, WEBHOOK_ALLOW_PRIVATE_URLS: true });
    const a = await createEndpoint(ctx, { studioId, url: 'http://127.0.0.1:9/a' });
    const b = await createEndpoint(ctx, { studioId, url: 'http://127.0.0.1:9/b' });
    expect(a.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretBytes(a.secret)).toHaveLength(32);
    expect(JSON.stringify(await listEndpoints(db.sql, studioId))).not.toContain('whsec_');
    const [rowA] = await db.sql<EndpointRow[]>`select * from webhook_endpoints where id = ${a.endpoint.id}`;
    const [rowB] = await db.sql<EndpointRow[]>`select * from webhook_endpoints where id = ${b.endpoint.id}`;
    const stored =
      JSON.stringify(rowA) + rowA!.secretCiphertext.toString('latin1') + rowA!.secretCiphertext.toString('base64');
    expect(stored).not.toContain(a.secret.slice(6));
    expect(rowA!.secretKeyId).toMatch(/^[0-9a-f]{8}$/);
    expect(await signingSecrets(ctx.box, rowA!)).toEqual([a.secret]);
    // a ciphertext copied onto another endpoint does not open (the endpoint id is its associated data)
    await expect(signingSecrets(ctx.box, { ...rowB!, secretCiphertext: rowA!.secretCiphertext })).rejects.toThrow();
    // another key opens nothing; a rotated key list (new first, old after) opens what the old one sealed
    const other = Buffer.alloc(32, 9).toString('base64');
    await expect(
      createSecretBox(other).open({ ciphertext: rowA!.secretCiphertext, keyId: rowA!.secretKeyId }, a.endpoint.id),
    ).rejects.toThrow(/no longer holds/);
    const rotated = createSecretBox(`${other},${db.config.WEBHOOK_SECRET_KEY}`);
    expect(await rotated.open({ ciphertext: rowA!.secretCiphertext, keyId: rowA!.secretKeyId }, a.endpoint.id)).toBe(
      a.secret,
    );
    expect((await rotated.seal('whsec_x', 'whe_1')).keyId).not.toBe(rowA!.secretKeyId);
  });

  test('signatures: Standard Webhooks v1 over "id.timestamp.body" with the decoded secret, one per secret', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'; // the Standard Webhooks specification's example
    const header = signatureHeader(
      [secretBytes(secret)],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(header).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(signatureHeader([secretBytes(secret), secretBytes(secret)], 'a', 1, 'b').split(' ')).toHaveLength(2);
  });
});

describe('small rules', () => {
  test('the retry schedule: parsed, one delay per retry with ±10 % jitter, then none', () => {
    expect(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h')).toEqual([5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
    expect(parseRetrySchedule('100ms, 1d')).toEqual([100, 86_400_000]);
    expect(() => parseRetrySchedule('5x')).toThrow();
    expect(retryDelay([1000, 2000], 1, () => 0)).toBe(900);
    expect(retryDelay([1000, 2000], 2, () => 1)).toBe(2200);
    expect(retryDelay([1000, 2000], 3)).toBeNull();
  });
  test('the first 1 KB of an answer: cut on a character boundary, no NUL', () => {
    expect(firstBytes('a'.repeat(2000))).toHaveLength(1024);
    const euros = firstBytes('€'.repeat(500)); // 3 bytes each: 341 whole ones fit
    expect(euros).toBe('€'.repeat(341));
    expect(firstBytes('a\u0000b')).toBe('ab');
  });
});
