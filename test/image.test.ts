/**
 * The image (Dockerfile), checked without a Docker engine: its dependency layer installs from what is copied before
 * `bun install` alone, the build context leaves out what must never be baked into an image, and compose waits for
 * what its processes need.
 */
import { expect, test } from 'bun:test';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const root = join(import.meta.dir, '..');
const dockerfile = await Bun.file(join(root, 'Dockerfile')).text();

test('the dependency layer installs from the files copied before it (the lockfile names patch files)', async () => {
  const lines = dockerfile.split('\n');
  const install = lines.findIndex((l) => /^RUN bun install/.test(l));
  expect(install).toBeGreaterThan(0);
  const dir = mkdtempSync(join(tmpdir(), 'studio-image-'));
  try {
    // COPY <sources…> <destination>: a directory's contents into the destination, a file into it (or as it)
    for (const line of lines.slice(0, install)) {
      const m = /^COPY (.+) (\S+)$/.exec(line);
      if (!m) continue;
      const to = join(dir, m[2]!);
      for (const source of m[1]!.split(' '))
        cpSync(join(root, source), source.endsWith('/') || !m[2]!.endsWith('/') ? to : join(to, basename(source)), {
          recursive: true,
        });
    }
    const run = Bun.spawnSync(['bun', ...lines[install]!.replace(/^RUN bun /, '').split(' ')], {
      cwd: dir,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    expect(run.stderr.toString()).not.toContain('error');
    expect(run.exitCode).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

test('the build context leaves out the local database, its password file and .env', async () => {
  const ignored = (await Bun.file(join(root, '.dockerignore')).text()).split('\n').map((l) => l.trim());
  for (const path of ['.data', '.env']) expect(ignored).toContain(path);
});

test("compose's migrations wait for Postgres over TCP, as they connect (a new volume answers on its socket first)", async () => {
  const compose = Bun.YAML.parse(await Bun.file(join(root, 'compose.yaml')).text()) as {
    services: Record<string, { healthcheck?: { test: string[] }; depends_on?: Record<string, { condition: string }> }>;
  };
  expect(compose.services.migrate!.depends_on!.postgres!.condition).toBe('service_healthy');
  const check = compose.services.postgres!.healthcheck!.test;
  expect(check.slice(0, 4)).toEqual(['CMD', 'pg_isready', '-h', '127.0.0.1']);
});
