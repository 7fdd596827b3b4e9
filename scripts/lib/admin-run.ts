/**
 * The CLI as an operator runs it, for the CI scripts that drive a `bun run start` stack (scripts/ci/): `bun run admin`
 * in a child with the stack's environment, and a call with a key.
 */
import { join } from 'node:path';

const root = join(import.meta.dir, '../..');

/** `bun run admin …args` with `env`: its exit code and output. */
export async function runAdmin(env: Record<string, string>, ...args: string[]) {
  const p = Bun.spawn(['bun', 'run', '--silent', 'admin', ...args], { cwd: root, env, stdout: 'pipe', stderr: 'pipe' });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, out, err };
}

/** `seed:demo --export`: the demo studio's id and keys, read from the shell lines it prints ('' for one missing). */
export async function seedDemoExport(env: Record<string, string>) {
  const r = await runAdmin(env, 'seed:demo', '--export');
  const vars = Object.fromEntries([...r.out.matchAll(/(\w+)='?([^'\n]*)'?/g)].map((m) => [m[1], m[2]]));
  return {
    ...r,
    studio: vars.STUDIO_ID ?? '',
    sk: vars.SECRET_KEY ?? '',
    pk: vars.PUBLISHABLE_KEY ?? '',
    /** The default sandbox's secret key (test mode). */
    testSk: vars.TEST_SECRET_KEY ?? '',
  };
}

/** A request with `Authorization: Bearer key`. */
export const callWithKey = (url: string, key: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });
