import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..');

/**
 * `tsc --noEmit`, strict, over `files` of `dir` (already written): resolves when they type-check, else throws with what
 * tsc said. How the typed-client tests (test/client-types.test.ts, sdk/test/types.test.ts) hold types that must narrow
 * or refuse (`@ts-expect-error`).
 */
export async function typecheck(dir: string, files: string[], o: { lib?: string[] } = {}): Promise<void> {
  await Bun.write(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        ...(o.lib ? { lib: o.lib } : {}),
        types: [],
        skipLibCheck: true,
      },
      files,
    }),
  );
  const p = Bun.spawn(['bunx', 'tsc', '-p', join(dir, 'tsconfig.json')], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(out + err);
}
