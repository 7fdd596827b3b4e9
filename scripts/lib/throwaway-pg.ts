/**
 * A Postgres cluster of its own, for tests and chaos runs that stop and restart the
 * database (the machine's shared Postgres is never touched): `initdb` in a temporary
 * directory, `pg_ctl` on a free port, trust authentication on 127.0.0.1 only. As root,
 * the binaries run as the `postgres` user (initdb refuses root).
 */

import { readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';

function binDir(): string {
  const fromPath = Bun.which('pg_ctl');
  if (fromPath && !fromPath.startsWith('/usr/bin')) return fromPath.replace(/\/pg_ctl$/, '');
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  if (!versions.length)
    throw new Error('no Postgres binaries found under /usr/lib/postgresql (apt-get install -y postgresql)');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

async function run(args: string[], asPostgres: boolean) {
  const cmd = asPostgres ? ['runuser', '-u', 'postgres', '--', ...args] : args;
  const p = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${args.join(' ')} failed (${code}): ${err || out}`);
}

export async function startThrowawayPostgres() {
  const bin = binDir();
  const asPostgres = process.getuid?.() === 0;
  const dir = await mkdtemp(join(tmpdir(), 'studio-pg-'));
  const data = join(dir, 'data');
  if (asPostgres) {
    const uid = Number((await Bun.$`id -u postgres`.text()).trim());
    const gid = Number((await Bun.$`id -g postgres`.text()).trim());
    await chown(dir, uid, gid);
  }
  await chmod(dir, 0o700);
  await run([`${bin}/initdb`, '-D', data, '--auth=trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'], asPostgres);
  const port = await freePort();
  const pgCtl = (...args: string[]) => run([`${bin}/pg_ctl`, '-D', data, ...args], asPostgres);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () => pgCtl('-w', '-l', join(dir, 'log'), '-o', options, 'start');
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    /** Stops at once, as a crash or a failover would (`-m immediate`). */
    stop: () => pgCtl('-m', 'immediate', 'stop'),
    start,
    async destroy() {
      await pgCtl('-m', 'immediate', 'stop').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
