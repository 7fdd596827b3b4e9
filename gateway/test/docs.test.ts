/** The self-served documentation: `/` leads to it, Scalar comes from this origin, every problem code is explained. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROBLEM_CODES, PROBLEM_DOCS } from '@studio/shared';
import { readinessCheck } from '@studio/shared/io';
import { type Stack, startStack } from '../../test/harness';
import { createDocsHandler } from '../src/docs';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

describe.each(['storefront', 'management'] as const)('%s surface', (surface) => {
  const base = () => (surface === 'storefront' ? s.storefrontUrl : s.managementUrl);

  test('/ and /v1 lead to /docs, without a key', async () => {
    for (const path of ['/', '/v1']) {
      const res = await fetch(base() + path, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('/docs');
    }
  });

  test('/docs loads only same-origin scripts, under a CSP that allows nothing else', async () => {
    const res = await fetch(`${base()}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls.filter((u) => u !== 'data:,')) expect(url).toStartWith('/');
    expect(html).not.toMatch(/https?:\/\//);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
  });

  test('/docs/scalar.js: the pinned bundle with an ETag, 304 on revalidation, brotli when accepted', async () => {
    const res = await fetch(`${base()}/docs/scalar.js`, {
      headers: { 'accept-encoding': 'br' },
      decompress: false,
    } as RequestInit);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/javascript');
    expect(res.headers.get('content-encoding')).toBe('br');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"/);
    expect((await fetch(`${base()}/docs/scalar.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const plain = await fetch(`${base()}/docs/scalar.js`, { headers: { 'accept-encoding': 'identity' } });
    expect((await plain.text()).length).toBeGreaterThan(1_000_000);
  });
});

test('/docs and /docs/problems declare an empty icon, so a browser asks for no /favicon.ico (a 404 in the log on every load)', async () => {
  for (const path of ['/docs', '/docs/problems']) {
    const html = await (await fetch(`${s.managementUrl}${path}`)).text();
    expect([path, html.includes('<link rel="icon" href="data:,">')]).toEqual([path, true]);
  }
});

test('/docs/problems explains every code: status, title, cause and fix, at its anchor', async () => {
  const res = await fetch(`${s.managementUrl}/docs/problems`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toStartWith('text/html');
  const html = await res.text();
  for (const code of PROBLEM_CODES) {
    const section = new RegExp(`<section id="${code}">([\\s\\S]*?)</section>`).exec(html)?.[1];
    if (!section) throw new Error(`no section for ${code}`);
    expect(section).toContain('Cause');
    expect(section).toContain('Fix');
    expect(PROBLEM_DOCS[code].cause.length).toBeGreaterThan(20);
    expect(PROBLEM_DOCS[code].fix.length).toBeGreaterThan(10);
  }
});

test('a reference bundle that could not be read is 500 with a problem body, and is read again on the next call', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'studio-scalar-'));
  const path = join(dir, 'standalone.js');
  try {
    const docs = createDocsHandler(s.config, readinessCheck(s.sql, 'none'), path);
    const req = () => new Request('http://gw/docs/scalar.js');
    const missing = await docs('storefront', '/docs/scalar.js', 'req_1', req());
    expect(missing.status).toBe(500);
    expect(missing.headers.get('content-type')).toStartWith('application/problem+json');
    expect((await missing.json()).detail).toContain('/openapi.json');
    writeFileSync(path, 'window.Scalar = {};');
    const found = await docs('storefront', '/docs/scalar.js', 'req_2', req());
    expect(found.status).toBe(200);
    expect(await found.text()).toBe('window.Scalar = {};');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
