/** The operator's webhook commands (docs/design/webhooks.md), run as operators run them: `bun scripts/admin.ts webhook:…`. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { sendTestEvent } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { recordDeliverySetting } from '@studio/shared/webhooks';
import { Webhook } from 'standardwebhooks';
import { freshDatabase, startReceiver, type TestDatabase, until } from './helpers';

const root = join(import.meta.dir, '../..');
let db: TestDatabase;
let studioId: string;
beforeAll(async () => {
  db = await freshDatabase({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  studioId = (await db.studio()).id;
});
afterAll(() => db.close());

async function admin(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn(['bun', 'scripts/admin.ts', ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: 'none', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code, json: () => JSON.parse(out) };
}
/** A failure: nothing on stdout, and on stderr the `error: …` line, after any log lines (JSON). */
async function fails(args: string[], message: RegExp, env: Record<string, string> = {}) {
  const r = await admin(args, env);
  expect(r.code).not.toBe(0);
  expect(r.out).toBe('');
  const lines = r.err.trim().split('\n');
  const logged = lines.findIndex((l) => !l.startsWith('{'));
  for (const l of lines.slice(0, logged)) expect(JSON.parse(l)).toHaveProperty('level');
  expect(lines[logged]).toMatch(/^error: /);
  expect(lines[logged]).toMatch(message);
  return { error: lines[logged]!, logged: lines.slice(0, logged).map((l) => JSON.parse(l)) };
}

test('webhook:create prints the endpoint and its secret once; webhook:list never shows a secret', async () => {
  const r = await admin([
    'webhook:create',
    '--studio',
    studioId,
    '--url',
    'http://127.0.0.1:9/hooks',
    '--events',
    'class.created,class.cancelled',
  ]);
  expect(r.code).toBe(0);
  const created = r.json();
  expect(Object.keys(created)).toEqual(['endpoint', 'secret']);
  expect(created.endpoint).toEqual({
    id: expect.stringMatching(/^whe_/),
    url: 'http://127.0.0.1:9/hooks',
    events: ['class.cancelled', 'class.created'],
    enabled: true,
    disabledReason: null,
    createdAt: expect.any(String),
  });
  expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const listed = await admin(['webhook:list', '--studio', studioId]);
  expect(listed.json()).toEqual({ endpoints: [created.endpoint] });
  expect(listed.out).not.toContain('whsec_');
  const stored = await db.sql`select * from webhook_endpoints where id = ${created.endpoint.id}`;
  expect(JSON.stringify(stored)).not.toContain(created.secret.slice(6));
});

test('the CLI honours WEBHOOK_ALLOW_PRIVATE_URLS: without it, only https to public addresses', async () => {
  const strict = { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' };
  await fails(
    ['webhook:create', '--studio', studioId, '--url', 'http://127.0.0.1:9/hooks'],
    /the URL must start with https:\/\//,
    strict,
  );
  await fails(
    ['webhook:create', '--studio', studioId, '--url', 'https://127.0.0.1/hooks'],
    /127\.0\.0\.1 is not a public address: 127\.0\.0\.0\/8 \(loopback\)/,
    strict,
  );
  await fails(
    ['webhook:create', '--studio', studioId, '--url', 'https://[::ffff:10.1.2.3]/hooks'],
    /IPv4-mapped 10\.0\.0\.0\/8/,
    strict,
  );
  await fails(
    ['webhook:create', '--studio', studioId, '--url', 'https://203.0.113.8:22/hooks'],
    /^error: the port must be 443 \(the https default\) or 8443 \(http:\/\/ and private addresses are allowed only when the stack that delivers webhooks runs with WEBHOOK_ALLOW_PRIVATE_URLS=true, for local development\)$/,
    strict,
  );
  // what localhost resolves to is logged for the operator, and said nowhere else
  const local = await fails(
    ['webhook:create', '--studio', studioId, '--url', 'https://localhost/hooks'],
    /^error: the host localhost is not a public address: it resolves to a private or reserved one \(http:\/\/ and private addresses are allowed only when the stack that delivers webhooks runs with WEBHOOK_ALLOW_PRIVATE_URLS=true, for local development\)$/,
    strict,
  );
  expect(local.logged).toEqual([
    expect.objectContaining({
      level: 'warn',
      host: 'localhost',
      address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/),
      refused: expect.stringMatching(/loopback/),
    }),
  ]);
});

test("one setting: the CLI checks a URL as the running stack's dispatchers deliver, and a refusal names the setting", async () => {
  const local = ['webhook:create', '--studio', studioId, '--url', 'http://127.0.0.1:9/setting'];
  try {
    // the stack delivers to public https only: the CLI's own WEBHOOK_ALLOW_PRIVATE_URLS=true does not make a dead endpoint
    await recordDeliverySetting(db.sql, false);
    const refused = await fails(local, /the URL must start with https:\/\//, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    expect(refused.error).toContain('runs with WEBHOOK_ALLOW_PRIVATE_URLS=true');
    // the stack delivers to private URLs: the CLI accepts one, whatever its own environment says
    await recordDeliverySetting(db.sql, true);
    const made = await admin(local, { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    expect([made.code, made.err]).toEqual([0, '']);
    expect(made.json().endpoint.url).toBe('http://127.0.0.1:9/setting');
  } finally {
    await db.sql`delete from webhook_delivery_setting`;
  }
});

test('bad input: one clear line and a non-zero exit', async () => {
  await fails(['webhook:create', '--studio', studioId], /--url is required/);
  await fails(['webhook:create', '--url', 'https://a.example/x'], /--studio is required/);
  await fails(['webhook:create', '--studio', 'std_nope', '--url', 'http://127.0.0.1:9/x'], /no studio std_nope/);
  await fails(
    ['webhook:create', '--studio', studioId, '--url', 'http://127.0.0.1:9/x', '--events', 'class.exploded'],
    /unknown event type class\.exploded/,
  );
  // named but empty is not "all" by accident (the dashboard refuses no type ticked the same way)
  for (const empty of ['', ','])
    await fails(
      ['webhook:create', '--studio', studioId, '--url', 'http://127.0.0.1:9/x', '--events', empty],
      /--events names at least one event type; leave it out to subscribe to all of them/,
    );
  await fails(['webhook:list', '--studio', 'std_nope'], /no studio std_nope/);
  await fails(['webhook:disable', '--endpoint', 'whe_nope'], /no webhook endpoint whe_nope/);
  await fails(['webhook:roll-secret', '--endpoint', 'whe_nope'], /no webhook endpoint whe_nope/);
  await fails(['webhook:roll-secret', '--endpoint', 'whe_nope', '--expires-in', 'soon'], /--expires-in must look like/);
});

test('webhook:disable, :enable, :roll-secret, :test and :delete', async () => {
  const r = startReceiver();
  const dispatcher = createDispatcher({ sql: db.sql, config: db.config, pollMs: 100 });
  dispatcher.start();
  try {
    const { endpoint, secret } = (await admin(['webhook:create', '--studio', studioId, '--url', r.url])).json();
    const off = (await admin(['webhook:disable', '--endpoint', endpoint.id])).json();
    expect(off.endpoint).toMatchObject({ id: endpoint.id, enabled: false, disabledReason: 'Disabled by hand.' });
    await fails(['webhook:test', '--endpoint', endpoint.id], /is disabled; enable it before sending a test event/);
    expect((await admin(['webhook:enable', '--endpoint', endpoint.id])).json().endpoint).toMatchObject({
      enabled: true,
      disabledReason: null,
    });

    const rolled = (await admin(['webhook:roll-secret', '--endpoint', endpoint.id])).json();
    expect(rolled.secret).toMatch(/^whsec_/);
    expect(rolled.secret).not.toBe(secret);
    expect(Date.parse(rolled.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);

    const sent = (await admin(['webhook:test', '--endpoint', endpoint.id])).json();
    expect(sent.delivery).toMatchObject({ endpointId: endpoint.id, eventType: 'webhook.test', status: 'pending' });
    await until(() => r.of(sent.delivery.eventId).length === 1, 5_000, 'the test event');
    const got = r.of(sent.delivery.eventId)[0]!;
    // both the old and the new secret verify it during the roll's grace
    expect(() => new Webhook(secret).verify(got.body, got.headers)).not.toThrow();
    expect(() => new Webhook(rolled.secret).verify(got.body, got.headers)).not.toThrow();

    const now = (await admin(['webhook:roll-secret', '--endpoint', endpoint.id, '--expires-in', '0'])).json();
    expect(now.previousSecretExpiresAt).toBeNull();

    const deleted = (await admin(['webhook:delete', '--endpoint', endpoint.id])).json();
    expect(deleted).toEqual({ endpoint: expect.objectContaining({ id: endpoint.id }), deleted: true });
    expect(
      (await admin(['webhook:list', '--studio', studioId])).json().endpoints.map((e: { id: string }) => e.id),
    ).not.toContain(endpoint.id);
    await fails(['webhook:delete', '--endpoint', endpoint.id], /no webhook endpoint/);
  } finally {
    await dispatcher.stop();
    r.stop();
  }
}, 30_000);

test("webhook:test counts with the dashboards' test events (10 at once, then 1 a second): past them, one error line saying when, exit 1, nothing sent", async () => {
  const { endpoint } = (
    await admin(['webhook:create', '--studio', studioId, '--url', 'http://127.0.0.1:9/limit'])
  ).json();
  for (let i = 0; i < 10; i++) await sendTestEvent(db.sql, endpoint.id, studioId); // as a dashboard sends them
  await fails(
    ['webhook:test', '--endpoint', endpoint.id],
    new RegExp(
      `^error: too many test events and replays to ${endpoint.id} \\(10 at once, then 1 a second\\): the next is allowed in (0\\.\\d|1) s$`,
    ),
  );
  const [{ n }] = (await db.sql`
    select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpoint.id}`) as unknown as [
    { n: number },
  ];
  expect(n).toBe(10);
});
