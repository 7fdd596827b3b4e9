/**
 * The `replicas` case (`bun run bench replicas`): two replicas of every process behind HAProxy (Debian), as
 * production runs them (docs/design/scale-out.md): two gateways behind one Storefront and one
 * Management front, each gateway forwarding to two storefront-services and two
 * management-services through HAProxy too. Measures a cached Storefront read and an
 * uncached Management read through the fronts (wrk, BENCH_SECONDS each), then shows on
 * both gateways directly that a revoked key is refused the moment the revoke returns and
 * that a Management write shows on the Storefront at once. Servers on BENCH_SERVER_CPU.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey, revokeApiKey } from '@studio/control';
import { connectRedis, createRedis, createSql, quitRedis, redisBroadcasts } from '@studio/shared/io';
import { freePorts } from '../lib/ports';
import { createStudio } from '../lib/studios';
import { caseOptions, report } from './report';
import { createBenchStack, root, waitFor } from './stack';
import { requireTools, runWrk } from './wrk';

const { SECONDS, SERVER_CPU: CPU, LOAD_CPU } = caseOptions({ seconds: 5, rounds: 1 });
requireTools({ wrk: 'wrk', haproxy: 'haproxy' });

const [front, g2, s2] = [await freePorts(4), await freePorts(4), await freePorts(2)] as [number[], number[], number[]];
const [sfFront, mgFront, sfSvcFront, mgSvcFront] = front as [number, number, number, number];
const stack = await createBenchStack(CPU, {
  STOREFRONT_SERVICE_URL: `http://127.0.0.1:${sfSvcFront}`,
  MANAGEMENT_SERVICE_URL: `http://127.0.0.1:${mgSvcFront}`,
  STOREFRONT_PUBLIC_URL: `http://127.0.0.1:${sfFront}`,
  MANAGEMENT_PUBLIC_URL: `http://127.0.0.1:${mgFront}`,
});
const e = stack.env;
const gw1 = { sf: Number(e.STOREFRONT_PORT), mg: Number(e.MANAGEMENT_PORT) };
const gw2 = { sf: g2[0]!, mg: g2[1]! };
const svc1 = { sf: Number(e.STOREFRONT_SERVICE_PORT), mg: Number(e.MANAGEMENT_SERVICE_PORT) };
const svc2 = { sf: s2[0]!, mg: s2[1]! };

const dir = await mkdtemp(join(tmpdir(), 'studio-haproxy-'));
const backend = (name: string, bind: number, ports: number[]) => `
frontend ${name}
  bind 127.0.0.1:${bind}
  default_backend ${name}_servers
backend ${name}_servers
  balance roundrobin
  option httpchk
  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost
${ports.map((p, i) => `  server ${name}${i + 1} 127.0.0.1:${p} check inter 500ms`).join('\n')}`;
await Bun.write(
  join(dir, 'haproxy.cfg'),
  `global
  maxconn 8192
defaults
  mode http
  option http-keep-alive
  timeout connect 2s
  timeout client 30s
  timeout server 30s
${backend('storefront', sfFront, [gw1.sf, gw2.sf])}
${backend('management', mgFront, [gw1.mg, gw2.mg])}
${backend('storefront_service', sfSvcFront, [svc1.sf, svc2.sf])}
${backend('management_service', mgSvcFront, [svc1.mg, svc2.mg])}
`,
);
const haproxy = Bun.spawn(
  ['taskset', '-c', CPU, Bun.which('haproxy') ?? '/usr/sbin/haproxy', '-db', '-f', join(dir, 'haproxy.cfg')],
  { stdout: 'ignore', stderr: 'inherit' },
);

let failed = false;
try {
  const sql = createSql(stack.config.DATABASE_URL, { max: 2 });
  const { studio } = await createStudio(sql, { name: 'Replicas' });
  await sql`insert into instructors ${sql(Array.from({ length: 20 }, (_, i) => ({ id: `ins_rep${String(i).padStart(3, '0')}`, studioId: studio.id, name: `Instructor ${i}` })))}`;
  const pk = await createApiKey(sql, { studioId: studio.id, kind: 'publishable', name: 'site' });
  const sk = await createApiKey(sql, {
    studioId: studio.id,
    kind: 'secret',
    name: 'sync',
    scopes: ['instructors:read', 'instructors:write'],
  });
  await stack.start(['storefront-service', 'management-service']);
  stack.spawn('storefront-service-2', ['bun', join(root, 'storefront-service/src/main.ts')], {
    STOREFRONT_SERVICE_PORT: String(svc2.sf),
  });
  stack.spawn('management-service-2', ['bun', join(root, 'management-service/src/main.ts')], {
    MANAGEMENT_SERVICE_PORT: String(svc2.mg),
  });
  await Promise.all([waitFor(`http://127.0.0.1:${svc2.sf}/readyz`), waitFor(`http://127.0.0.1:${svc2.mg}/readyz`)]);
  await stack.start(['gateway']);
  stack.spawn('gateway-2', ['bun', join(root, 'gateway/src/main.ts')], {
    STOREFRONT_PORT: String(gw2.sf),
    MANAGEMENT_PORT: String(gw2.mg),
    DASHBOARD_PORT: String(g2[2]),
    OPS_PORT: String(g2[3]),
  });
  await waitFor(`http://127.0.0.1:${gw2.sf}/readyz`);
  await Bun.sleep(2_500); // HAProxy's health checks see every server up

  const load = { connections: 50, seconds: SECONDS, cpu: LOAD_CPU };
  const sfRead = await runWrk(`http://127.0.0.1:${sfFront}/v1/instructors`, {
    ...load,
    headers: { authorization: `Bearer ${pk.key}`, 'accept-encoding': 'gzip' },
  });
  const mgRead = await runWrk(`http://127.0.0.1:${mgFront}/v1/instructors`, {
    ...load,
    headers: { authorization: `Bearer ${sk.key}` },
  });
  console.log(
    `two replicas of each process behind HAProxy, all on CPU ${CPU}, wrk on the other, 50 connections, ${SECONDS} s each`,
  );
  console.log(
    `  Storefront GET /v1/instructors (cached):  ${sfRead.rps.toFixed(0)} req/s, p50 ${sfRead.p50.toFixed(2)} ms, p99 ${sfRead.p99.toFixed(2)} ms, non-2xx ${sfRead.non2xx}`,
  );
  console.log(
    `  Management GET /v1/instructors:           ${mgRead.rps.toFixed(0)} req/s, p50 ${mgRead.p50.toFixed(2)} ms, p99 ${mgRead.p99.toFixed(2)} ms, non-2xx ${mgRead.non2xx}`,
  );

  // Across replicas: each gateway called directly.
  const gateways = [gw1, gw2];
  const mg = (g: { mg: number }, key: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${g.mg}/v1/instructors`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...init.headers },
    });
  const sf = async (g: { sf: number }) =>
    (await (
      await fetch(`http://127.0.0.1:${g.sf}/v1/instructors`, { headers: { authorization: `Bearer ${pk.key}` } })
    ).json()) as { instructors: unknown[] };
  const victim = await createApiKey(sql, {
    studioId: studio.id,
    kind: 'secret',
    name: 'victim',
    scopes: ['instructors:read'],
  });
  const before = await Promise.all(gateways.map(async (g) => (await mg(g, victim.key)).status));
  const redis = createRedis(stack.config.REDIS_URL, 'bench redis', stack.config.REDIS_CLUSTER_NODES);
  await connectRedis(redis);
  const revoked = await revokeApiKey(sql, redisBroadcasts(redis, stack.config.REDIS_PREFIX), victim.record.id);
  const after = await Promise.all(gateways.map(async (g) => (await mg(g, victim.key)).status));
  console.log(
    `revocation: before ${before.join(' / ')}, the revoke returned (acknowledged by every replica: ${revoked.propagated}), then ${after.join(' / ')} on gateway 1 / gateway 2`,
  );
  const seen = await Promise.all(gateways.map(async (g) => (await sf(g)).instructors.length));
  const created = await mg({ mg: mgFront }, sk.key, {
    method: 'POST',
    body: JSON.stringify({ name: 'Noor' }),
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
  });
  const now = await Promise.all(gateways.map(async (g) => (await sf(g)).instructors.length));
  console.log(
    `invalidation: Storefront instructors ${seen.join(' / ')}; a Management create through the front (${created.status}); at once ${now.join(' / ')} on gateway 1 / gateway 2`,
  );
  const checks = {
    'every read through the fronts answered 2xx': sfRead.non2xx === 0 && mgRead.non2xx === 0,
    'the key answered 200 on both gateways before the revoke': before.every((x) => x === 200),
    'the revoke acknowledged by both, then 401 on both': revoked.propagated && after.every((x) => x === 401),
    'the write seen on both Storefronts at once': now.every((n, i) => n === seen[i]! + 1),
  };
  for (const [check, held] of Object.entries(checks)) console.log(`  ${held ? 'held' : 'FAILED'}: ${check}`);
  await quitRedis(redis);
  await sql.end();
  report({
    failedChecks: Object.values(checks).filter((held) => !held).length,
    'Storefront req/s': sfRead.rps,
    'Storefront p99 ms': sfRead.p99,
    'Management req/s': mgRead.rps,
    'Management p99 ms': mgRead.p99,
  });
} catch (err) {
  console.error(`bench failed: ${(err as Error).stack ?? err}`);
  failed = true;
} finally {
  haproxy.kill('SIGTERM');
  await haproxy.exited;
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
