import { SCOPES, TEST_SCOPES } from '@studio/shared';

const RESOURCES = [...new Set(SCOPES.map((s) => s.split(':')[0]!))];

/**
 * A secret key's scopes in a few words: "all", "all read; classes: write",
 * "classes: read, write; members: read"; a test key's `sandbox:write` is named after them ("all; sandbox: write").
 * The full list stays one click away.
 */
export function scopeSummary(scopes: readonly string[]): string {
  const has = new Set(scopes);
  const testOnly = TEST_SCOPES.filter((sc) => has.has(sc)).map((sc) => sc.replace(':', ': '));
  return [liveSummary(has), ...testOnly].filter(Boolean).join('; ') || 'none';
}

function liveSummary(has: Set<string>): string {
  const allRead = RESOURCES.every((r) => has.has(`${r}:read`));
  const allWrite = RESOURCES.every((r) => has.has(`${r}:write`));
  if (allRead && allWrite) return 'all';
  const parts: string[] = [];
  if (allRead) parts.push('all read');
  if (allWrite) parts.push('all write');
  for (const r of RESOURCES) {
    const perms = [
      !allRead && has.has(`${r}:read`) ? 'read' : '',
      !allWrite && has.has(`${r}:write`) ? 'write' : '',
    ].filter(Boolean);
    if (perms.length) parts.push(`${r}: ${perms.join(', ')}`);
  }
  return parts.join('; ');
}
