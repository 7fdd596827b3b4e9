/**
 * `bun run build`: dist/index.js, one ESM file for every runtime (Bun's bundler, browser target: no Bun or Node
 * built-in is reached for), and dist/*.d.ts by tsc (declarations are tsc's job: Bun's bundler emits none).
 * `standardwebhooks` stays an import, the package's one dependency.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

const root = join(import.meta.dir, '..');
await rm(join(root, 'dist'), { recursive: true, force: true });
const built = await Bun.build({
  entrypoints: [join(root, 'src/index.ts')],
  outdir: join(root, 'dist'),
  target: 'browser',
  format: 'esm',
  external: ['standardwebhooks'],
  sourcemap: 'linked',
});
if (!built.success) {
  for (const log of built.logs) console.error(log);
  process.exit(1);
}
const tsc = Bun.spawnSync(['bunx', 'tsc', '-p', join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdout: 'inherit',
  stderr: 'inherit',
});
if (tsc.exitCode !== 0) process.exit(tsc.exitCode ?? 1);
console.log(`built ${join(root, 'dist')}`);
