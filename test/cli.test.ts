/** The operator command line, run as operators run it, against a live stack. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { channels, SCOPES } from '@studio/shared';
import { connectRedis, createRedis, quitRedis } from '@studio/shared/io';
import { expectProblem, inMode, MODES, type Stack, startStack } from './harness';
import { inEachMode } from './needs';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

const root = join(import.meta.dir, '..');
/** The CLI against a stack, as an operator runs it beside that stack (single-node: REDIS_URL=none). */
const adminOf =
  (st: Stack, extra: Record<string, string> = {}) =>
  async (...args: string[]) => {
    const p = Bun.spawn(['bun', 'scripts/admin.ts', ...args], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: st.config.DATABASE_URL,
        REDIS_URL: st.config.REDIS_URL,
        REDIS_CLUSTER_NODES: st.config.REDIS_CLUSTER_NODES,
        REDIS_PREFIX: st.config.REDIS_PREFIX,
        DASHBOARD_PUBLIC_URL: st.dashboardUrl,
        DASHBOARD_SECRET: st.config.DASHBOARD_SECRET,
        ...extra,
      },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [out, err, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    return { out, err, code, json: () => JSON.parse(out) };
  };
const admin = (...args: string[]) => adminOf(s)(...args);
async function fails(args: string[], message: RegExp, runner = admin) {
  const r = await runner(...args);
  expect(r.code).not.toBe(0);
  expect(r.out).toBe('');
  expect(r.err.trim().split('\n')[0]).toMatch(/^error: /);
  expect(r.err).toMatch(message);
}

let studioId = '';
describe('studio and keys', () => {
  test('studio:create makes a studio and its active admin', async () => {
    const r = await admin(
      'studio:create',
      '--name',
      'Lotus Yoga',
      '--timezone',
      'Europe/Berlin',
      '--admin-email',
      'Owner@Lotus.test',
    );
    expect(r.code).toBe(0);
    const j = r.json();
    expect(j.studio.id).toMatch(/^std_/);
    expect(j.studio.timezone).toBe('Europe/Berlin');
    expect(j.admin).toMatchObject({ email: 'owner@lotus.test', role: 'admin', status: 'active' });
    studioId = j.studio.id;
  });
  test('key:create --origins restricts a publishable key; key:origins changes it; bad input is refused', async () => {
    const r = (
      await admin(
        'key:create',
        '--studio',
        studioId,
        '--kind',
        'publishable',
        '--name',
        'site',
        '--origins',
        'https://Lotus.example,https://*.lotus.example',
      )
    ).json();
    expect(r.record.allowedOrigins).toEqual(['https://lotus.example', 'https://*.lotus.example']);
    await expectProblem(
      await s.sf('/v1/instructors', r.key, { headers: { origin: 'https://evil.example' } }),
      403,
      'origin_not_allowed',
    );
    const changed = (await admin('key:origins', '--key', r.record.id, '--origins', 'https://evil.example')).json();
    expect(changed.record.allowedOrigins).toEqual(['https://evil.example']);
    expect((await s.sf('/v1/instructors', r.key, { headers: { origin: 'https://evil.example' } })).status).toBe(200);
    expect((await admin('key:origins', '--key', r.record.id, '--origins', '')).json().record.allowedOrigins).toBeNull();
    // --origins left out is a mistake, not "any website": refused, the key as it was
    await admin('key:origins', '--key', r.record.id, '--origins', 'https://lotus.example');
    await fails(['key:origins', '--key', r.record.id], /--origins is required/);
    expect((await s.sf('/v1/instructors', r.key, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    await fails(
      ['key:create', '--studio', studioId, '--kind', 'publishable', '--name', 'x', '--origins', 'lotus.example'],
      /not an origin/,
    );
    await fails(
      [
        'key:create',
        '--studio',
        studioId,
        '--kind',
        'secret',
        '--name',
        'x',
        '--scopes',
        'classes:read',
        '--origins',
        'https://a.example',
      ],
      /publishable/,
    );
  });

  test('key:create prints the key once; key:list never shows it', async () => {
    const r = (
      await admin(
        'key:create',
        '--studio',
        studioId,
        '--kind',
        'secret',
        '--name',
        'ci',
        '--scopes',
        'classes:read,instructors:read',
      )
    ).json();
    expect(r.key).toMatch(/^svc_sk_[0-9A-Za-z]{32}$/);
    expect(r.record).toMatchObject({
      kind: 'secret',
      name: 'ci',
      scopes: ['classes:read', 'instructors:read'],
      revokedAt: null,
      lastUsedAt: null,
    });
    expect(r.record.hint).toBe(`svc_sk_…${r.key.slice(-4)}`);
    const list = await admin('key:list', '--studio', studioId);
    expect(list.out).not.toContain(r.key);
    expect(list.json().keys.map((k: { id: string }) => k.id)).toContain(r.record.id);
    const stored = await s.sql`select * from api_keys where id = ${r.record.id}`;
    expect(JSON.stringify(stored)).not.toContain(r.key);
  });
  test('key:create --scopes takes the shorthands all, read-all and write-all, as the dashboard offers them', async () => {
    const scopesOf = async (scopes: string) =>
      (
        await admin('key:create', '--studio', studioId, '--kind', 'secret', '--name', 'short', '--scopes', scopes)
      ).json().record.scopes;
    expect(await scopesOf('all')).toEqual([...SCOPES]);
    expect(await scopesOf('read-all')).toEqual(SCOPES.filter((x) => x.endsWith(':read')));
    expect(await scopesOf('read-all,classes:write')).toEqual(
      SCOPES.filter((x) => x.endsWith(':read') || x === 'classes:write'),
    );
    expect(await scopesOf('write-all,members:read')).toEqual(
      SCOPES.filter((x) => x.endsWith(':write') || x === 'members:read'),
    );
    await fails(
      ['key:create', '--studio', studioId, '--kind', 'secret', '--name', 'x', '--scopes', 'everything'],
      /unknown scope everything; scopes are all, read-all, write-all or any of classes:read/,
    );
  });

  test('help prints the usage on stdout, exit 0, and docs/cli.md lists every command it names', async () => {
    for (const asked of ['help', '--help']) {
      const r = await admin(asked);
      expect([r.code, r.err]).toEqual([0, '']);
      expect(r.out).toStartWith('usage: bun run admin <command> [options]');
    }
    const usage = (await admin('help')).out;
    const reference = await Bun.file(join(root, 'docs/cli.md')).text();
    for (const [, name] of usage.matchAll(/^ {2}([a-z:|-]+)/gm))
      for (const one of name!.split('|'))
        expect([one, reference.includes(`bun run admin ${one}`) || reference.includes(`|${one}`)]).toEqual([one, true]);
  });

  test('bad input: one clear line and a non-zero exit', async () => {
    await fails(
      ['key:create', '--studio', studioId, '--kind', 'secret', '--name', 'x', '--scopes', 'classes:read,classes:admin'],
      /unknown scope classes:admin/,
    );
    await fails(
      ['key:create', '--studio', studioId, '--kind', 'master', '--name', 'x'],
      /--kind must be secret or publishable/,
    );
    await fails(
      ['key:create', '--studio', 'std_nope', '--kind', 'secret', '--name', 'x', '--scopes', 'classes:read'],
      /no studio std_nope/,
    );
    await fails(['key:create', '--studio', studioId, '--kind', 'secret', '--name', 'x'], /a secret key needs --scopes/);
    await fails(
      ['key:create', '--studio', studioId, '--kind', 'publishable', '--name', 'x', '--scopes', 'classes:read'],
      /publishable keys take no --scopes/,
    );
    await fails(['key:create', '--studio', studioId, '--kind', 'secret'], /--name is required/);
    await fails(['key:revoke', '--key', 'key_nope'], /no key key_nope/);
    await fails(['key:list', '--studio', 'std_nope'], /no studio std_nope/);
    await fails(['studio:create', '--name', 'X', '--timezone', 'Mars/Olympus'], /unknown timezone/);
    await fails(['studio:create', '--name', 'X', '--modes', 'broadcast,telepathy'], /unknown mode telepathy/);
    // an admin the API could not answer with (its members page would fail) is not made
    for (const email of ['not an address', `a@${'\u0130'.repeat(127)}`])
      await fails(['studio:create', '--name', 'X', '--admin-email', email], /--admin-email must be an e-mail address/);
    await fails(['frobnicate'], /unknown command frobnicate/);
    // named, with the list, before any database is looked for (here: a DATABASE_URL that is no URL)
    const lost = await adminOf(s, { DATABASE_URL: 'bogus' })('frobnicate');
    expect(lost.code).toBe(1);
    expect(lost.err).toStartWith('error: unknown command frobnicate\nusage: bun run admin');
    await fails(['key:create', '--bogus-flag'], /bogus-flag/);
  });
});

// with Redis, and in single-node mode (the CLI's changes reach the gateway over Postgres NOTIFY, docs/design/single-node.md)
for (const mode of MODES)
  inEachMode(mode).describe(`effects on a running gateway (${mode})`, () => {
    let g: Stack; // the file's stack with Redis; a single-node one of its own otherwise
    let sid = '';
    let run: ReturnType<typeof adminOf>;
    beforeAll(async () => {
      g = mode === 'redis' ? s : await startStack(inMode(mode));
      run = adminOf(g);
      sid = mode === 'redis' ? studioId : (await run('studio:create', '--name', 'Lotus Yoga')).json().studio.id;
    });
    afterAll(async () => {
      if (g !== s) await g?.close();
    });
    /** A secret key of the studio that may read instructors, made with the CLI: its text and record. */
    const readerKey = async (name: string) =>
      (
        await run('key:create', '--studio', sid, '--kind', 'secret', '--name', name, '--scopes', 'instructors:read')
      ).json();

    test('key:revoke takes effect at once', async () => {
      const { key, record } = (
        await run('key:create', '--studio', sid, '--kind', 'publishable', '--name', 'web')
      ).json();
      expect((await g.sf('/v1/instructors', key)).status).toBe(200);
      const r = await run('key:revoke', '--key', record.id);
      expect(r.code).toBe(0);
      expect(r.json().record.revokedAt).toBeString();
      await expectProblem(await g.sf('/v1/instructors', key), 401, 'api_key_revoked');
    });
    // on one Redis server (a cluster's test run has its own revoke tests)
    test.if(mode === 'redis' && !process.env.TEST_REDIS_CLUSTER_NODES)(
      'key:revoke that a gateway does not confirm says so (a stalled replica: here, a subscriber that never answers)',
      async () => {
        const { record } = await readerKey('stalled');
        const mute = createRedis(g.config.REDIS_URL, 'mute replica');
        await connectRedis(mute);
        await mute.subscribe(channels(g.config.REDIS_PREFIX).keysRevoked, () => {});
        try {
          const r = await run('key:revoke', '--key', record.id);
          expect(r.code).toBe(0);
          expect(r.json().record.propagated).toBe(false);
          expect(r.err).toContain('warning: not every gateway confirmed within 2 s that it dropped the key');
        } finally {
          await quitRedis(mute);
        }
      },
    );

    test.if(mode === 'redis' && !process.env.TEST_REDIS_CLUSTER_NODES)(
      "key:revoke run with another REDIS_PREFIX than the gateways': none of them heard it, and it says so",
      async () => {
        const { record } = await readerKey('elsewhere');
        const r = await adminOf(g, { REDIS_PREFIX: 'elsewhere:' })('key:revoke', '--key', record.id);
        expect(r.code).toBe(0);
        expect(r.json().record.propagated).toBe(false);
        expect(r.err).toContain('warning: not every gateway confirmed within 2 s that it dropped the key');
      },
      15_000,
    );

    test.if(mode === 'redis' && !process.env.TEST_REDIS_CLUSTER_NODES)(
      'key:origins and studio:delete that a gateway does not confirm say so too',
      async () => {
        const { record } = (await run('key:create', '--studio', sid, '--kind', 'publishable', '--name', 'site')).json();
        const doomed = (await run('studio:create', '--name', 'Doomed')).json().studio.id;
        await run('key:create', '--studio', doomed, '--kind', 'publishable', '--name', 'web');
        const mute = createRedis(g.config.REDIS_URL, 'mute replica');
        await connectRedis(mute);
        await mute.subscribe(channels(g.config.REDIS_PREFIX).keysRevoked, () => {});
        try {
          const origins = await run('key:origins', '--key', record.id, '--origins', 'https://lotus.example');
          expect(origins.code).toBe(0);
          expect(origins.err).toContain('warning: not every gateway confirmed within 2 s that it dropped the key');
          const deleted = await run('studio:delete', '--studio', doomed);
          expect(deleted.code).toBe(0);
          expect(deleted.json().studio.id).toBe(doomed);
          expect(deleted.json().studio.propagated).toBeUndefined();
          expect(deleted.err).toContain(
            "warning: not every gateway confirmed within 2 s that it dropped the studio's keys",
          );
        } finally {
          await quitRedis(mute);
        }
      },
      15_000,
    );

    test.if(mode === 'single-node')(
      'key:revoke typed where a Redis answers still reaches the single-node gateway: the running gateway decides the way, not the terminal',
      async () => {
        const { key, record } = await readerKey('server');
        expect((await g.mg('/v1/instructors', key)).status).toBe(200); // now in the gateway's memory
        // a Redis started after the stack (here: named), which no single-node gateway listens to
        const r = await adminOf(g, { REDIS_URL: s.config.REDIS_URL })('key:revoke', '--key', record.id);
        expect(r.code).toBe(0);
        expect(r.json().record.propagated).toBe(true);
        await expectProblem(await g.mg('/v1/instructors', key), 401, 'api_key_revoked');
      },
    );

    test('key:roll makes a new key and ends the old one after --expires-in; key:create --expires-in', async () => {
      const { key, record } = await readerKey('ci');
      expect((await g.mg('/v1/instructors', key)).status).toBe(200);
      const r = await run('key:roll', '--key', record.id, '--expires-in', '0');
      expect(r.code).toBe(0);
      const rolled = r.json();
      expect(rolled.key).toMatch(/^svc_sk_/);
      expect(rolled.record).toMatchObject({ name: 'ci', kind: 'secret', scopes: ['instructors:read'] });
      expect(rolled.previous.id).toBe(record.id);
      await expectProblem(await g.mg('/v1/instructors', key), 401, 'api_key_expired');
      expect((await g.mg('/v1/instructors', rolled.key)).status).toBe(200);
      // the default grace is 24 hours
      const later = (await run('key:roll', '--key', rolled.record.id)).json();
      expect(Date.parse(later.previous.expiresAt) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
      const expiring = (
        await run('key:create', '--studio', sid, '--kind', 'publishable', '--name', 'promo', '--expires-in', '7d')
      ).json();
      expect(Date.parse(expiring.record.expiresAt) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
      await fails(
        ['key:roll', '--key', record.id, '--expires-in', 'soon'],
        /--expires-in must look like 30s, 90m, 24h or 7d/,
        run,
      );
      // one replacement per key: rolling it again (a retried command) is refused, naming the replacement
      await fails(
        ['key:roll', '--key', rolled.record.id],
        new RegExp(`was already rolled: its replacement is ${later.record.id}`),
        run,
      );
    });
    test('studio:delete turns its keys into 403 studio_required at once', async () => {
      const st = (await run('studio:create', '--name', 'Doomed')).json().studio.id;
      const { key } = (
        await run('key:create', '--studio', st, '--kind', 'secret', '--name', 'x', '--scopes', 'instructors:read')
      ).json();
      expect((await g.mg('/v1/instructors', key)).status).toBe(200);
      expect((await run('studio:delete', '--studio', st)).code).toBe(0);
      await expectProblem(await g.mg('/v1/instructors', key), 403, 'studio_required');
    });
    test('site:publish and login-link', async () => {
      // a directory of its own, removed whatever happens: nothing is left in the system's temporary directory
      const dir = await mkdtemp(join(tmpdir(), 'studio-site-'));
      const file = join(dir, 'site.json');
      try {
        await Bun.write(file, JSON.stringify({ title: 'Lotus Yoga', tagline: 'Breathe' }));
        const r = await run('site:publish', '--studio', sid, '--file', file);
        expect(r.code).toBe(0);
        expect(r.json().site).toMatchObject({ title: 'Lotus Yoga', tagline: 'Breathe' });
        await Bun.write(file, JSON.stringify({ title: 'x', colour: 'red' }));
        await fails(['site:publish', '--studio', sid, '--file', file], /unknown site field colour/, run);
        await fails(['site:publish', '--studio', sid, '--file', '/nonexistent.json'], /no such file/, run);
        await Bun.write(file, JSON.stringify({ title: 'x', logoUrl: 'javascript:alert(1)' }));
        await fails(
          ['site:publish', '--studio', sid, '--file', file],
          /logoUrl must be an http:\/\/ or https:\/\/ URL/,
          run,
        );
        // every field within what /v1/site documents, and no link a page could run
        for (const [doc, message] of [
          [{ title: 'x'.repeat(201) }, /site \/title .*200/],
          [{ title: 'x', tagline: 42 }, /site \/tagline/],
          [{ title: 'x', contactEmail: 'nobody' }, /site \/contactEmail/],
          [{ title: 'x', social: { website: 'javascript:alert(document.domain)' } }, /site \/social\/website/],
        ] as const) {
          await Bun.write(file, JSON.stringify(doc));
          await fails(['site:publish', '--studio', sid, '--file', file], message, run);
        }
        await Bun.write(
          file,
          JSON.stringify({ title: 'x', social: { instagram: '@lotus', website: 'https://lotus.test' } }),
        );
        expect((await run('site:publish', '--studio', sid, '--file', file)).code).toBe(0);
        const link = (await run('login-link', '--studio', sid)).json();
        expect(link.url).toStartWith(`${g.dashboardUrl}/login?token=`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

describe('the README quickstart', () => {
  test('seed:demo --export prints shell exports whose keys call both surfaces', async () => {
    const r = await admin('seed:demo', '--export');
    expect(r.code).toBe(0);
    const vars = Object.fromEntries(
      r.out
        .trim()
        .split('\n')
        .map((line) => {
          const m = /^export ([A-Z_]+)=(\S+)$/.exec(line);
          if (!m) throw new Error(`not an export line: ${line}`);
          return [m[1]!, m[2]!];
        }),
    );
    expect(Object.keys(vars).sort()).toEqual([
      'PUBLISHABLE_KEY',
      'SECRET_KEY',
      'STUDIO_ID',
      'TEST_PUBLISHABLE_KEY',
      'TEST_SECRET_KEY',
    ]);
    const classes = await s.sf('/v1/classes', vars.PUBLISHABLE_KEY!);
    expect(classes.status).toBe(200);
    expect(((await classes.json()) as { classes: unknown[] }).classes.length).toBeGreaterThan(0);
    const instructors = await s.mg('/v1/instructors', vars.SECRET_KEY!);
    expect(instructors.status).toBe(200);
    expect(((await instructors.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    // the test pair reaches the default sandbox, seeded as the studio is
    const sandboxed = await s.mg('/v1/instructors', vars.TEST_SECRET_KEY!);
    expect(sandboxed.status).toBe(200);
    expect(((await sandboxed.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
  });
});
