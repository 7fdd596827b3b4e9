/**
 * docs/design/single-node.md, the database: how every entry point resolves it, and the embedded Postgres
 * of `bun run start` (initialised once, data kept across restarts, state file 0600,
 * PG_VERSION checked). Runs as root here and in CI, so Postgres runs as `studio-pg`.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedPaths, LOCAL_DATABASE_URL, loadConfig, resolveDatabase } from '@studio/shared';
import postgres from 'postgres';
import { type EmbeddedPostgres, startEmbeddedPostgres, superviseEmbeddedPostgres } from '../scripts/lib/embedded-pg';
import { migrate } from '../scripts/lib/migrate';
import { freePort } from '../scripts/lib/ports';

const dir = mkdtempSync(join(tmpdir(), 'studio-embedded-test-'));
chmodSync(dir, 0o711); // mkdtemp makes it 0700: Postgres's own user (as root) must be able to pass through, as through a checkout
const env = { EMBEDDED_PG_DIR: join(dir, 'postgres') };
let running: EmbeddedPostgres | null = null;

afterAll(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('resolving the database', () => {
  test('a DATABASE_URL that is set is used as it is, without looking further', async () => {
    const url = 'postgres://someone:secret@db.example:6543/elsewhere?sslmode=require';
    expect(resolveDatabase({ ...env, DATABASE_URL: url }, { host: '127.0.0.1', port: await freePort() })).toEqual({
      source: 'env',
      url,
    });
    expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
  });

  test('something listening on the probed port is used', async () => {
    const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
    try {
      expect(resolveDatabase(env, { host: '127.0.0.1', port: server.port })).toEqual({
        source: 'local',
        url: `postgres://postgres@127.0.0.1:${server.port}/studio`,
      });
    } finally {
      server.stop(true);
    }
    expect(LOCAL_DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/studio');
  });

  test('nothing on the port: the embedded one, found through its state file (none yet: no URL)', async () => {
    const port = await freePort(); // free: nothing listens there
    const resolved = resolveDatabase(env, { host: '127.0.0.1', port });
    expect(resolved).toEqual({
      source: 'embedded',
      url: null,
      dataDir: join(dir, 'postgres'),
      stateFile: join(dir, 'postgres.json'),
    });
    // relative directories are anchored at the repository root, whatever the working directory
    expect(embeddedPaths({}).stateFile).toBe(join(import.meta.dir, '..', '.data', 'postgres.json'));
  });
});

describe('the embedded Postgres', () => {
  const { dataDir, stateFile } = embeddedPaths(env);
  const resolvedUrl = async () => resolveDatabase(env, { host: '127.0.0.1', port: await freePort() }).url;

  test('first start initialises, writes a 0600 state file the resolution finds, and takes the migrations (btree_gist included)', async () => {
    running = await startEmbeddedPostgres({ dataDir, stateFile });
    expect(running.initialised).toBe(true);
    if (process.getuid?.() === 0) expect(running.user).not.toBe('root');
    expect(statSync(stateFile).mode & 0o777).toBe(0o600);
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    expect(state.port).toBe(running.port);
    expect(state.password).toMatch(/^[0-9a-f]{48}$/);
    expect(await resolvedUrl()).toBe(running.url);

    const applied = await migrate(running.url);
    expect(applied).toContain('00001_init.sql');
    const sql = postgres(running.url, { max: 1, onnotice: () => {} });
    try {
      expect((await sql`select extname from pg_extension`).map((r) => r.extname)).toContain('btree_gist');
      await sql`create table kept (note text)`;
      await sql`insert into kept values ('still here')`;
    } finally {
      await sql.end();
    }
    // without the password nobody gets in
    const intruder = postgres(running.url.replace(/:[0-9a-f]{48}@/, ':wrong@'), {
      max: 1,
      onnotice: () => {},
      connect_timeout: 5,
    });
    await expect(intruder`select 1`).rejects.toThrow(/password authentication failed/);
    await intruder.end();
  }, 30_000);

  test("docs/operations.md's PGURL line prints the URL that reaches it", async () => {
    const page = await Bun.file(join(import.meta.dir, '..', 'docs', 'operations.md')).text();
    const script = /^PGURL="\$\(bun -p '(.+)'\)"$/m.exec(page)?.[1];
    expect(script).toBeDefined();
    // run where the page runs it, the repository root: here, one whose .data/postgres.json is this test's
    const where = join(dir, 'checkout');
    mkdirSync(join(where, '.data'), { recursive: true });
    writeFileSync(join(where, '.data', 'postgres.json'), readFileSync(stateFile));
    const run = Bun.spawnSync(['bun', '-p', script!], { cwd: where, stdout: 'pipe', stderr: 'pipe' });
    expect(run.stderr.toString()).toBe('');
    const url = run.stdout.toString().trim();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      expect((await sql`select current_database() as db`)[0]!.db).toBe('studio');
    } finally {
      await sql.end();
    }
  });

  test('a restart keeps the data and the password; migrations are up to date', async () => {
    await running!.stop();
    const before = running!.url;
    running = await startEmbeddedPostgres({ dataDir, stateFile });
    expect(running.initialised).toBe(false);
    expect(running.url).toBe(before);
    expect(await migrate(running.url)).toEqual([]);
    const sql = postgres(running.url, { max: 1, onnotice: () => {} });
    try {
      expect((await sql`select note from kept`).map((r) => r.note)).toEqual(['still here']);
    } finally {
      await sql.end();
    }
  }, 30_000);

  test('a second start on the same data directory is refused while the first runs', async () => {
    await expect(startEmbeddedPostgres({ dataDir, stateFile })).rejects.toThrow(/already runs on .*kill -INT/);
  });

  test('two starts at once on a fresh data directory: one initialises and runs, the other is refused, naming it; a lock left by a start that died is taken over', async () => {
    const twin = join(dir, 'twin');
    const dead = Bun.spawn(['true']);
    await dead.exited;
    writeFileSync(`${twin}.starting`, `${dead.pid}\n`); // a start killed mid-way left its lock
    const both = await Promise.allSettled([
      startEmbeddedPostgres({ dataDir: twin, stateFile: `${twin}.json` }),
      startEmbeddedPostgres({ dataDir: twin, stateFile: `${twin}.json` }),
    ]);
    const started = both.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = both.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    try {
      expect(started).toHaveLength(1);
      expect(refused).toEqual([
        expect.stringMatching(/another `bun run start` \(pid \d+\) is starting the embedded Postgres on .*twin/),
      ]);
      expect(started[0]!.initialised).toBe(true);
      expect(existsSync(`${twin}.starting`)).toBe(false); // released once Postgres is up
      const sql = postgres(started[0]!.url.replace(/\/studio$/, '/postgres'), { max: 1, onnotice: () => {} });
      try {
        expect((await sql`select 1 as one`)[0]!.one).toBe(1);
      } finally {
        await sql.end();
      }
    } finally {
      await Promise.all(started.map((pg) => pg.stop()));
    }
  }, 60_000);

  test('data of another major version is refused before any start, naming both versions', async () => {
    await running!.stop();
    running = null;
    const file = join(dataDir, 'PG_VERSION');
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, '14\n');
    try {
      await expect(startEmbeddedPostgres({ dataDir, stateFile })).rejects.toThrow(
        /from PostgreSQL 14, and the embedded binaries are PostgreSQL 15/,
      );
    } finally {
      writeFileSync(file, original);
    }
  });

  test('a directory that holds something else is refused as it is: its owner and mode untouched', async () => {
    const other = join(dir, 'not-postgres');
    mkdirSync(other, { mode: 0o755 });
    writeFileSync(join(other, 'notes.txt'), 'mine\n', { mode: 0o644 });
    const before = [statSync(other), statSync(join(other, 'notes.txt'))].map((st) => [st.uid, st.mode]);
    await expect(startEmbeddedPostgres({ dataDir: other, stateFile: join(dir, 'other.json') })).rejects.toThrow(
      /is not empty and holds no Postgres data/,
    );
    expect([statSync(other), statSync(join(other, 'notes.txt'))].map((st) => [st.uid, st.mode])).toEqual(before);
  });

  test('a data directory restored without its state file starts with a new password, data intact', async () => {
    const old = JSON.parse(readFileSync(stateFile, 'utf8')).password;
    rmSync(stateFile);
    running = await startEmbeddedPostgres({ dataDir, stateFile });
    expect(running.initialised).toBe(false);
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).password).not.toBe(old);
    expect(statSync(stateFile).mode & 0o777).toBe(0o600);
    const sql = postgres(running.url, { max: 1, onnotice: () => {} });
    try {
      expect((await sql`select note from kept`).map((r) => r.note)).toEqual(['still here']);
    } finally {
      await sql.end();
    }
  }, 30_000);

  test('killed under its supervisor (as bun run start keeps it), it is started again at the same URL, data intact', async () => {
    const url = running!.url;
    let restarted: EmbeddedPostgres | null = null;
    const exits: (number | string)[] = [];
    let stopping = false;
    superviseEmbeddedPostgres(running!, {
      stopping: () => stopping,
      onExited: (code) => exits.push(code),
      onRestarted: (pg) => (restarted = pg),
      onFailed: (err) => {
        throw err;
      },
    });
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 300 && !restarted; i++) await Bun.sleep(100);
    expect(exits).toEqual(['SIGKILL']);
    expect(restarted!.url).toBe(url);
    running = restarted;
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      expect((await sql`select note from kept`).map((r) => r.note)).toEqual(['still here']);
    } finally {
      await sql.end();
    }
    stopping = true; // afterAll's stop() is not a death
  }, 40_000);
});
