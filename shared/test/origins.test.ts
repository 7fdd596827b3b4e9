import { expect, test } from 'bun:test';
import { originAllowed, parseOriginList, parseOriginPattern } from '../src/origins';

test('origin patterns: exact origins and https://*.domain, canonical; anything else refused with a reason', () => {
  expect(parseOriginPattern('https://Lotus.Example/')).toEqual({ pattern: 'https://lotus.example' });
  expect(parseOriginPattern('https://*.lotus.example')).toEqual({ pattern: 'https://*.lotus.example' });
  expect(parseOriginPattern('https://shop.lotus.example:8443')).toEqual({ pattern: 'https://shop.lotus.example:8443' });
  expect(parseOriginPattern('http://localhost:5173')).toEqual({ pattern: 'http://localhost:5173' });
  for (const bad of [
    'lotus.example',
    'http://lotus.example',
    'https://lotus.example/path',
    'https://*lotus.example',
    'https://*.*.lotus.example',
    'https://a.*.lotus.example',
    'ftp://lotus.example',
    'https://-bad.example',
    'https://*.localhost',
    'https://lotus',
    '*',
  ]) {
    expect('error' in parseOriginPattern(bad)).toBe(true);
  }
  expect(parseOriginList(['https://a.example', ' https://a.example ', ''])).toEqual({ origins: ['https://a.example'] });
  expect(parseOriginList([])).toEqual({ origins: null });
  // a handful of sites, not thousands (each is checked on every call from a page)
  const many = Array.from({ length: 51 }, (_, i) => `https://s${i}.example`);
  expect(parseOriginList(many.slice(0, 50))).toEqual({ origins: many.slice(0, 50) });
  expect(parseOriginList(many)).toEqual({ error: "at most 50 origins (a *. pattern covers a site's subdomains)" });
});

test('originAllowed: exact, wildcard subdomains at any depth, never the bare domain or a look-alike', () => {
  const p = ['https://lotus.example', 'https://*.lotus.example'];
  expect(originAllowed(p, 'https://lotus.example')).toBe(true);
  expect(originAllowed(p, 'https://www.lotus.example')).toBe(true);
  expect(originAllowed(p, 'https://a.b.lotus.example')).toBe(true);
  expect(originAllowed(p, 'https://lotus.example.evil.example')).toBe(false);
  expect(originAllowed(p, 'https://evil-lotus.example')).toBe(false);
  expect(originAllowed(p, 'https://evillotus.example')).toBe(false);
  expect(originAllowed(p, 'http://www.lotus.example')).toBe(false);
  expect(originAllowed(p, 'https://www.lotus.example:8443')).toBe(false);
  expect(originAllowed(['https://*.lotus.example'], 'https://lotus.example')).toBe(false);
  expect(originAllowed(['https://*.lotus.example'], 'https://.lotus.example')).toBe(false);
  expect(originAllowed(null, 'https://anything.example')).toBe(true);
  expect(originAllowed(p, 'null')).toBe(false);
});
