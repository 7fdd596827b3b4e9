/**
 * docs/design/hostile-callers.md, the pure parts: the one request-target parser, the refusal of development
 * secrets beyond loopback, and the server defaults (never development mode).
 */
import { describe, expect, test } from 'bun:test';
import { ConfigError, loadConfig, requestTarget } from '@studio/shared';
import { SERVE_DEFAULTS } from '@studio/shared/io';

describe('requestTarget', () => {
  test('finds the whole target after any well-formed Host', () => {
    for (const [url, path, pq] of [
      ['http://127.0.0.1:48004/v1/classes?limit=5', '/v1/classes', '/v1/classes?limit=5'],
      ['http://mg/v1/members', '/v1/members', '/v1/members'], // shorter than Elysia's 11 characters
      ['http://a/', '/', '/'],
      ['http://[::1]:48005/anything/v1/members?x=1', '/anything/v1/members', '/anything/v1/members?x=1'],
      ['http://studio-api.example./v1/site', '/v1/site', '/v1/site'],
      ['http://storefront_service:48104//v1/x', '//v1/x', '//v1/x'],
      ['https://api.example/v1/x?', '/v1/x', '/v1/x?'],
    ] as const)
      expect(requestTarget(url)).toEqual({ path, pathAndQuery: pq, valid: true });
  });

  test('a malformed Host is refused, and the target is still found whole (no segment dropped)', () => {
    // what Bun leaves in req.url for a Host it refuses (`a/b`, `a b`, empty): the bare target
    expect(requestTarget('/anything/v1/members')).toEqual({
      path: '/anything/v1/members',
      pathAndQuery: '/anything/v1/members',
      valid: false,
    });
    expect(requestTarget('//v1/x?y')).toEqual({ path: '//v1/x', pathAndQuery: '//v1/x?y', valid: false });
    // Hosts Bun lets through that no URL parser accepts
    for (const host of [
      '[',
      '[zz]',
      '[::1',
      'a:b:c',
      '%2f',
      'a:65536',
      'a:123456',
      '999.1.1.1',
      'a.123',
      '1.2.3',
      'x@y',
      '',
      // labels IDNA refuses: a Host the URL parser throws on
      'xn--',
      'xn--a',
      'XN--a:8080',
      'a.xn--.example',
      'xn--a-',
      // an empty label names no host
      'a..b',
      '.a',
      'a.b..',
      '.',
    ]) {
      const t = requestTarget(`http://${host}/anything/v1/members`);
      expect(t.valid).toBe(false);
      expect(t.pathAndQuery).toBe('/anything/v1/members');
    }
  });

  test('the Host it remembers as well formed lets through only that Host, with its port, whatever came between', () => {
    for (const [url, valid] of [
      ['http://api.example:8080/v1/x', true],
      ['http://api.example:8080/v1/y?z=1', true], // the remembered Host
      ['http://api.example:80801/v1/x', false], // the remembered one and more: a port past 65535
      ['http://api.example.123/v1/x', false], // a name ending in a number that is no address
      ['http://api.example:8080/', true],
      ['http://[/v1/x', false],
      ['/v1/x', false],
      ['http://api.example:8080/v1/x', true],
    ] as const) {
      expect(requestTarget(url).valid).toBe(valid);
      expect(requestTarget(url).valid).toBe(valid); // asked again, straight after
    }
  });

  test('a name with punycode labels IDNA accepts is well formed, and a fully qualified one', () => {
    for (const host of ['xn--ls8h', 'xn--nxasmq6b.example', 'a.xn--ls8h.example:8443', 'a.b.', 'XN--LS8H'])
      expect([host, requestTarget(`http://${host}/v1/x`).valid]).toEqual([host, true]);
  });

  test('whatever it accepts, the URL parser accepts too, with the same path', () => {
    const alphabet = 'ab1.:[]-_~%@ 09xXfF!$&*+,;=';
    let accepted = 0;
    for (let n = 0; n < 20_000; n++) {
      let host = '';
      for (let i = Math.floor(Math.random() * 10); i > 0; i--)
        host += alphabet[Math.floor(Math.random() * alphabet.length)];
      const url = `http://${host}/v1/x?y=1`;
      const t = requestTarget(url);
      if (!t.valid) continue;
      accepted++;
      expect(new URL(url).pathname).toBe(t.path);
    }
    expect(accepted).toBeGreaterThan(100);
  });

  test('whatever it accepts of names made of punycode-like labels, the URL parser accepts too', () => {
    const alphabet = 'xXnN--a1.';
    let accepted = 0;
    for (let n = 0; n < 20_000; n++) {
      let host = Math.random() < 0.5 ? 'xn--' : '';
      for (let i = Math.floor(Math.random() * 8); i > 0; i--)
        host += alphabet[Math.floor(Math.random() * alphabet.length)];
      const url = `http://${host}/v1/x`;
      if (!requestTarget(url).valid) continue;
      accepted++;
      expect([host, URL.canParse(url)]).toEqual([host, true]);
    }
    expect(accepted).toBeGreaterThan(100);
  });
});

describe('development secrets', () => {
  const WEBHOOK_KEY = Buffer.alloc(32, 7).toString('base64');
  test('beyond loopback they refuse to load, naming the variables and the way out', () => {
    let error: unknown;
    try {
      loadConfig({ HOST: '0.0.0.0' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toContain('GATEWAY_SECRET, DASHBOARD_SECRET, CURSOR_SECRET');
    expect(String(error)).toContain('ALLOW_DEVELOPMENT_SECRETS=true');
    // one default left is one too many
    expect(() =>
      loadConfig({
        HOST: '10.0.0.5',
        GATEWAY_SECRET: 'a'.repeat(32),
        DASHBOARD_SECRET: 'b'.repeat(32),
        WEBHOOK_SECRET_KEY: WEBHOOK_KEY,
      }),
    ).toThrow(/^CURSOR_SECRET still holds/);
    // the key that encrypts webhook signing secrets is one of them
    expect(() =>
      loadConfig({
        HOST: '10.0.0.5',
        GATEWAY_SECRET: 'a'.repeat(32),
        DASHBOARD_SECRET: 'b'.repeat(32),
        CURSOR_SECRET: 'c'.repeat(32),
      }),
    ).toThrow(/^WEBHOOK_SECRET_KEY still holds/);
    // compose's way of setting them explicitly to the same values is the same secret
    expect(() => loadConfig({ HOST: '::', GATEWAY_SECRET: 'dev-gateway-secret-change-me' })).toThrow(ConfigError);
  });

  test('loopback, real secrets, or ALLOW_DEVELOPMENT_SECRETS=true start', () => {
    for (const HOST of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) expect(loadConfig({ HOST }).HOST).toBe(HOST);
    expect(loadConfig({ HOST: '0.0.0.0', ALLOW_DEVELOPMENT_SECRETS: 'true' }).ALLOW_DEVELOPMENT_SECRETS).toBe(true);
    expect(
      loadConfig({
        HOST: '0.0.0.0',
        GATEWAY_SECRET: 'a'.repeat(32),
        DASHBOARD_SECRET: 'b'.repeat(32),
        CURSOR_SECRET: 'c'.repeat(32),
        WEBHOOK_SECRET_KEY: WEBHOOK_KEY,
      }).HOST,
    ).toBe('0.0.0.0');
    expect(() => loadConfig({ HOST: '0.0.0.0', ALLOW_DEVELOPMENT_SECRETS: 'false' })).toThrow(ConfigError);
  });
});

describe('server defaults', () => {
  test('never development mode: a handler that throws answers a bare problem+json 500, no stack or source', async () => {
    const server = Bun.serve({
      ...SERVE_DEFAULTS,
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        throw new Error('secret internals at /work/main/x.ts');
      },
    });
    try {
      expect(server.development).toBe(false);
      const res = await fetch(`http://127.0.0.1:${server.port}/boom`);
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toStartWith('application/problem+json');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(JSON.parse(text).code).toBe('internal_error');
      expect(text).not.toContain('secret internals');
      expect(text).not.toContain('.ts');
    } finally {
      server.stop(true);
    }
  });
});
