/**
 * The README is a short front door (conventions, habit 18) that sends readers on, and every page it sends them to
 * exists. The README and the pages beside docs/design/ (docs/*.md) link only to files in the repository,
 * and the README links each docs page once.
 */
import { expect, test } from 'bun:test';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const root = join(import.meta.dir, '..');
const read = (file: string) => Bun.file(join(root, file)).text();

/** The targets of a Markdown text's inline links and images (`[text](target)`), code spans and blocks left out. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** A target in this repository: not a URL of another scheme, not a bare anchor. */
const isRelative = (target: string) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#');

/** The repository path a relative link in `file` points at, without its #anchor or ?query. */
const resolved = (file: string, target: string) =>
  normalize(join(dirname(file), decodeURIComponent(target.replace(/[#?].*$/, ''))));

const docsPages = readdirSync(join(root, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);

test('README.md has at most 200 lines', async () => {
  const lines = (await read('README.md')).replace(/\n$/, '').split('\n');
  expect(lines.length).toBeLessThanOrEqual(200);
});

test.each(['README.md', ...docsPages])(
  'every relative link in %s resolves to a file in the repository',
  async (file) => {
    const broken = linkTargets(await read(file))
      .filter(isRelative)
      .filter((target) => {
        const path = resolved(file, target);
        return path.startsWith('..') || !existsSync(join(root, path));
      });
    expect(broken).toEqual([]);
  },
);

test('the README links each docs page it links exactly once', async () => {
  const counts = new Map<string, number>();
  for (const target of linkTargets(await read('README.md')).filter(isRelative)) {
    const path = resolved('README.md', target);
    if (path.startsWith('docs/')) counts.set(path, (counts.get(path) ?? 0) + 1);
  }
  expect(counts.size).toBeGreaterThan(0);
  expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
});

test('the README links every page beside docs/design/, and the design index', async () => {
  const linked = new Set(
    linkTargets(await read('README.md'))
      .filter(isRelative)
      .map((target) => resolved('README.md', target)),
  );
  expect([...docsPages, 'docs/design/README.md'].filter((page) => !linked.has(page))).toEqual([]);
});
