import { expect, test } from 'bun:test';
import { Glob } from 'bun';

const root = new URL('../../', import.meta.url).pathname;

test('settings come through the config object: no process code but shared/src/config.ts reads process.env', async () => {
  const readers: string[] = [];
  for await (const file of new Glob('{shared,gateway,storefront-service,management-service}/src/**/*.ts').scan(root)) {
    if (file === 'shared/src/config.ts') continue;
    if ((await Bun.file(root + file).text()).includes('process.env')) readers.push(file);
  }
  expect(readers).toEqual([]);
});
