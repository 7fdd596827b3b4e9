import { expect, test } from 'bun:test';
import { Glob } from 'bun';

const root = new URL('../../', import.meta.url).pathname;

test('settings come through the config object: no process code but shared/src/config.ts reads process.env', async () => {
  const readers: string[] = [];
  for await (const file of new Glob(
    '{shared,control,gateway,dashboard,storefront-service,management-service}/src/**/*.ts',
  ).scan(root)) {
    if (file === 'shared/src/config.ts') continue;
    if ((await Bun.file(root + file).text()).includes('process.env')) readers.push(file);
  }
  expect(readers).toEqual([]);
});

test('small functions: none in the src trees (the SDK and the MCP server included) is over 60 lines (conventions 11)', async () => {
  const ts = (await import('typescript')).default;
  const long: string[] = [];
  for await (const file of new Glob(
    '{shared,control,gateway,dashboard,storefront-service,management-service,sdk,mcp}/src/**/*.ts',
  ).scan(root)) {
    if (file.startsWith('sdk/src/generated/')) continue; // written by openapi-typescript, held by its drift test
    const source = ts.createSourceFile(file, await Bun.file(root + file).text(), ts.ScriptTarget.Latest, true);
    const visit = (node: import('typescript').Node) => {
      if (
        ts.isFunctionDeclaration(node) ||
        ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node)
      ) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > 60) long.push(`${file}:${first + 1} (${last - first + 1} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  expect(long).toEqual([]);
});

test('shared/src is pure outside io/: no file there imports the I/O kit (io/), a database or Redis client, or the network', async () => {
  const impure: string[] = [];
  const io = /from '(\.\.?\/)+io\/|from '(postgres|redis|node:net|node:dns|node:http)'/;
  for await (const file of new Glob('shared/src/**/*.ts').scan(root)) {
    if (file.startsWith('shared/src/io/')) continue;
    if (io.test(await Bun.file(root + file).text())) impure.push(file);
  }
  expect(impure).toEqual([]);
});

test('no source line cites a document outside the repository: a decision is named by its docs/design page, never by a section number (§N)', async () => {
  const citing: string[] = [];
  const glob = new Glob('{shared,gateway,storefront-service,management-service,scripts,test,docs}/**/*.{ts,md,css,js}');
  for await (const file of glob.scan(root)) {
    if (file.includes('node_modules')) continue;
    const lines = (await Bun.file(root + file).text()).split('\n');
    lines.forEach((line, i) => {
      // the design index may say which earlier contract section each page replaces; this test names the pattern
      if (file === 'docs/design/README.md' || file === 'shared/test/conventions.test.ts') return;
      if (/§\s?\d|\bcontract §|conventions §/.test(line)) citing.push(`${file}:${i + 1}`);
    });
  }
  expect(citing).toEqual([]);
});
