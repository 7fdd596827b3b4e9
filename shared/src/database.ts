/**
 * Which Postgres a process uses (docs/design/single-node.md), decided the same way by every entry point
 * (`bun run start`, each process's main.ts through `loadConfig`, the CLI):
 *
 * 1. `DATABASE_URL` when it is set, as it is;
 * 2. otherwise Postgres on 127.0.0.1:5432 when something answers there;
 * 3. otherwise the embedded one (`bun run start` starts it), found through the state file
 *    beside its data directory (`EMBEDDED_PG_DIR`, default `.data/postgres`, state in
 *    `.data/postgres.json`, mode 0600): its port and generated password.
 *
 * Synchronous, since `loadConfig` is: on Linux "answers" is read from the kernel's socket
 * table (`/proc/net/tcp`, `tcp6`: a listening socket on that address or the wildcard, in
 * this process's network namespace), which costs no connection and is what a connect would
 * find; elsewhere a short TCP connect runs in a child process (300 ms timeout).
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/** Postgres on this machine's default port, as a Postgres installed by hand listens (compose's is not published to the host). */
export const LOCAL_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/studio';
export const DEFAULT_EMBEDDED_PG_DIR = '.data/postgres';
/** The database the stack uses inside the embedded Postgres. */
export const EMBEDDED_DATABASE = 'studio';

/** The repository root: relative `EMBEDDED_PG_DIR`s are anchored here, so every entry point finds the same one whatever its working directory. */
const REPO_ROOT = join(import.meta.dir, '../..');

/** What `bun run start` writes beside the data directory (mode 0600) once its Postgres is up. */
export interface EmbeddedState {
  port: number;
  user: string;
  password: string;
  database: string;
  /** The data directory it belongs to (absolute). */
  dataDir: string;
}

export type DatabaseResolution =
  | { source: 'env'; url: string }
  | { source: 'local'; url: string }
  /** `url` is null while no embedded Postgres has ever been started from this data directory (no state file). */
  | { source: 'embedded'; url: string | null; dataDir: string; stateFile: string };

export function embeddedPaths(env: Record<string, string | undefined>): {
  dataDir: string;
  stateFile: string;
} {
  const raw = (env.EMBEDDED_PG_DIR || DEFAULT_EMBEDDED_PG_DIR).replace(/\/+$/, '') || '/';
  const dataDir = isAbsolute(raw) ? resolve(raw) : resolve(REPO_ROOT, raw);
  return { dataDir, stateFile: `${dataDir}.json` };
}

export const embeddedUrl = (s: Pick<EmbeddedState, 'user' | 'password' | 'port' | 'database'>): string =>
  `postgres://${encodeURIComponent(s.user)}:${encodeURIComponent(s.password)}@127.0.0.1:${s.port}/${encodeURIComponent(s.database)}`;

export function readEmbeddedState(stateFile: string): EmbeddedState | null {
  if (!existsSync(stateFile)) return null;
  let s: Partial<EmbeddedState>;
  try {
    s = JSON.parse(readFileSync(stateFile, 'utf8'));
  } catch (err) {
    throw new Error(
      `${stateFile} is not readable JSON (${(err as Error).message}): remove it and run \`bun run start\` again`,
    );
  }
  if (
    typeof s.port !== 'number' ||
    typeof s.password !== 'string' ||
    typeof s.user !== 'string' ||
    typeof s.database !== 'string'
  ) {
    throw new Error(`${stateFile} lacks port, user, password or database: remove it and run \`bun run start\` again`);
  }
  return s as EmbeddedState;
}

/** The order of docs/design/single-node.md. `probe` is the address tried second (tests pass a port nothing listens on). */
export function resolveDatabase(
  env: Record<string, string | undefined>,
  probe: { host: string; port: number } = { host: '127.0.0.1', port: 5432 },
): DatabaseResolution {
  if (env.DATABASE_URL) return { source: 'env', url: env.DATABASE_URL };
  if (answers(probe.host, probe.port)) {
    const url =
      probe.port === 5432 && probe.host === '127.0.0.1'
        ? LOCAL_DATABASE_URL
        : `postgres://postgres@${probe.host}:${probe.port}/studio`;
    return { source: 'local', url };
  }
  const { dataDir, stateFile } = embeddedPaths(env);
  let state: EmbeddedState | null = null;
  try {
    state = readEmbeddedState(stateFile);
  } catch {} // unusable: as if absent (`bun run start` writes it again)
  return { source: 'embedded', url: state ? embeddedUrl(state) : null, dataDir, stateFile };
}

/** Whether something accepts TCP connections on host:port now. */
export function answers(host: string, port: number): boolean {
  return listening(host, port) ?? connectsInChild(host, port);
}

/** From the kernel's table of sockets (Linux); null when it cannot tell (no /proc, or a host that is not an IPv4 literal). */
function listening(host: string, port: number): boolean | null {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!v4) return null;
  const hex = (n: number, w: number) => n.toString(16).toUpperCase().padStart(w, '0');
  // /proc/net/tcp writes each address as the 32-bit word in host (little-endian) order
  const own = v4
    .slice(1, 5)
    .reverse()
    .map((b) => hex(Number(b), 2))
    .join('');
  const accepted = new Set([own, '00000000', `0000000000000000FFFF0000${own}`, '00000000000000000000000000000000']);
  const wanted = hex(port, 4);
  let read = false;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    read = true;
    for (const line of text.split('\n')) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] !== '0A') continue; // TCP_LISTEN
      const [addr, p] = (cols[1] ?? '').split(':');
      if (p === wanted && accepted.has(addr ?? '')) return true;
    }
  }
  return read ? false : null;
}

const probed = new Map<string, boolean>();
const PROBE = `const s=require('node:net').connect(+process.argv[2],process.argv[1]);s.setTimeout(300,()=>process.exit(1));s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));`;

/** A real connect, in a child so that it can be waited for synchronously; once per process and address. */
function connectsInChild(host: string, port: number): boolean {
  const key = `${host}:${port}`;
  let ok = probed.get(key);
  if (ok === undefined) {
    ok =
      Bun.spawnSync([process.execPath, '-e', PROBE, host, String(port)], {
        stdout: 'ignore',
        stderr: 'ignore',
        timeout: 2_000,
      }).exitCode === 0;
    probed.set(key, ok);
  }
  return ok;
}
