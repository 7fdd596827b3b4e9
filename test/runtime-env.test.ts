import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { RUNTIME_ENV } from '@studio/shared';

const root = join(import.meta.dir, '..');

// `bun run start` passes them to its children (checked on the live processes by scripts/ci/single-node-smoke.ts)
test("the image runs every process with the runtime's settings (shared/src/runtime.ts)", async () => {
  const dockerfile = await Bun.file(join(root, 'Dockerfile')).text();
  const set = new Map([...dockerfile.matchAll(/^ENV (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
  expect(Object.keys(RUNTIME_ENV).length).toBeGreaterThan(0);
  for (const [name, value] of Object.entries(RUNTIME_ENV)) expect(set.get(name)).toBe(value);
});

test("the benches' processes run with them too", async () => {
  const { benchEnv } = await import('../scripts/bench/stack');
  const env = await benchEnv('postgres://postgres@127.0.0.1:5432/unused');
  for (const [name, value] of Object.entries(RUNTIME_ENV)) expect(env[name]).toBe(process.env[name] ?? value);
});
