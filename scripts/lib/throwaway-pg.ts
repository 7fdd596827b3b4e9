/**
 * A Postgres cluster of its own, for tests and chaos runs that stop and restart the
 * database (the machine's shared Postgres is never touched): `initdb` in a temporary
 * directory, `pg_ctl` on a free port, trust authentication on 127.0.0.1 only. As root,
 * the binaries run as the `postgres` user (initdb refuses root). One not destroyed (a test
 * that failed or timed out before its `finally`) is stopped when the process exits.
 */

import { existsSync, readdirSync, rmSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';

/** Where initdb and pg_ctl are: PATH's (unless Debian's wrappers in /usr/bin), else the newest /usr/lib/postgresql/N/bin; null when neither. */
export function throwawayPostgresBinaries(): string | null {
  const fromPath = Bun.which('pg_ctl');
  if (fromPath && !fromPath.startsWith('/usr/bin') && Bun.which('initdb')) return fromPath.replace(/\/pg_ctl$/, '');
  const versions = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
    : [];
  const bin = versions.map((v) => `/usr/lib/postgresql/${v}/bin`).find((d) => existsSync(`${d}/pg_ctl`));
  return bin ?? null;
}

const asPostgres = process.getuid?.() === 0;
const asUser = (args: string[]) => (asPostgres ? ['runuser', '-u', 'postgres', '--', ...args] : args);

async function run(args: string[]) {
  const p = Bun.spawn(asUser(args), { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${args.join(' ')} failed (${code}): ${err || out}`);
}

/** Each cluster not yet destroyed, by directory, with the command that stops it. */
const live = new Map<string, string[]>();
process.on('exit', () => {
  for (const [dir, stop] of live) {
    Bun.spawnSync(stop, { stdout: 'ignore', stderr: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
});

export async function startThrowawayPostgres() {
  const bin = throwawayPostgresBinaries();
  if (!bin)
    throw new Error('no initdb and pg_ctl on PATH or under /usr/lib/postgresql (apt-get install -y postgresql)');
  const dir = await mkdtemp(join(tmpdir(), 'studio-pg-'));
  const data = join(dir, 'data');
  const pgCtl = (...args: string[]) => run([`${bin}/pg_ctl`, '-D', data, ...args]);
  live.set(dir, asUser([`${bin}/pg_ctl`, '-D', data, '-m', 'immediate', 'stop']));
  const destroy = async () => {
    await pgCtl('-m', 'immediate', 'stop').catch(() => {});
    await rm(dir, { recursive: true, force: true });
    live.delete(dir);
  };
  let port = 0;
  const start = () => {
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
    return pgCtl('-w', '-l', join(dir, 'log'), '-o', options, 'start');
  };
  try {
    if (asPostgres) {
      const uid = Number((await Bun.$`id -u postgres`.text()).trim());
      const gid = Number((await Bun.$`id -g postgres`.text()).trim());
      await chown(dir, uid, gid);
    }
    await chmod(dir, 0o700);
    await run([`${bin}/initdb`, '-D', data, '--auth=trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    port = await freePort();
    await start();
  } catch (err) {
    await destroy();
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    /** Stops at once, as a crash or a failover would (`-m immediate`). */
    stop: () => pgCtl('-m', 'immediate', 'stop'),
    start,
    destroy,
  };
}
