import { expect, test } from 'bun:test';
import { SCOPES } from '@studio/shared';
import { scopeSummary } from '../src/keys/scopes';

test('scopes are summarised in a few words', () => {
  expect(scopeSummary([...SCOPES])).toBe('all');
  expect(scopeSummary(SCOPES.filter((s) => s.endsWith(':read')))).toBe('all read');
  expect(scopeSummary([...SCOPES.filter((s) => s.endsWith(':read')), 'classes:write'])).toBe(
    'all read; classes: write',
  );
  expect(scopeSummary(['classes:read', 'classes:write', 'members:read'])).toBe('classes: read, write; members: read');
  expect(scopeSummary([])).toBe('none');
});

test("a test key's sandbox:write is named after the rest", () => {
  expect(scopeSummary([...SCOPES, 'sandbox:write'])).toBe('all; sandbox: write');
  expect(scopeSummary(['sandbox:write'])).toBe('sandbox: write');
  expect(scopeSummary(['classes:read', 'sandbox:write'])).toBe('classes: read; sandbox: write');
});
