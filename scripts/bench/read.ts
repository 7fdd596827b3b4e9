/**
 * The `read` case (`bun run bench read`): Storefront `GET /v1/classes` through the gateway versus an Elysia
 * hello-world behind nginx (the anchor of issue 10; a plain Bun.serve hello-world
 * too, for scale), same machine, same run. Beside them, as a diagnosis: the floor of a
 * cached read (`bench/cached-floor.ts`: Bun.serve sending the gateway's own answer from
 * memory), a second gateway with `LOG_LEVEL=warn` (what the access lines cost: issue 22
 * allows 5 %), and the CPU per request of each row's own processes and of Postgres (the
 * gateway's activity entries are written there, on the same two cores). Starts its
 * own gateways and storefront-service against a fresh database and Redis namespace,
 * seeds a studio (200 instructors, 2,000 classes, 20,000 occurrences), drives wrk at
 * 50 connections, prints a table and the median ratio, and cleans up.
 *
 * Placement: servers on CPU `BENCH_SERVER_CPU` (default 0), wrk on `BENCH_LOAD_CPU`
 * (default 1). Postgres and Redis run where the OS puts them. Each server is measured
 * alone while the others idle, in `BENCH_ROUNDS` (default 3) alternating rounds of
 * `BENCH_SECONDS` (default 10) each, each round starting one target later (`inTurn`).
 * Its targets are the table's (cases.ts); a run with an answer not 2xx is void.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql } from '@studio/shared/io';
import { freePorts } from '../lib/ports';
import { formatTarget, target } from './cases';
import { type CpuPerRequest, cpuMeter, formatCpu, namedCpuMeter, totalCpu, withChildren } from './cpu';
import { nginxPath, startNginx } from './nginx';
import { caseOptions, report } from './report';
import { seedStorefrontRead } from './seed';
import { createBenchStack, waitFor } from './stack';
import { median } from './stats';
import { inTurn, requireTools, runWrk, type WrkResult, warmGateway } from './wrk';

const { SECONDS, ROUNDS, SERVER_CPU, LOAD_CPU } = caseOptions({ seconds: 10, rounds: 3 });
const CONNECTIONS = 50;
const PATH = '/v1/classes';
/** The gateway's cached read against nginx -> Elysia hello-world; its p99. */
const [TARGET_RATIO, TARGET_P99] = [target('read', 'ratio'), target('read', 'p99')];
/** The gateway without access lines (`LOG_LEVEL=warn`) over the gateway as production runs it, in req/s. */
const TARGET_ACCESS_LINES = target('read', 'accessLines');
/** The width of the table's first column. */
const NAME_WIDTH = 46;

requireTools({ wrk: 'wrk', taskset: 'util-linux' });
if (!nginxPath()) {
  console.error(
    'error: nginx is not installed (Debian/Ubuntu: apt-get install -y nginx); it is the anchor this bench compares with',
  );
  process.exit(1);
}

const stack = await createBenchStack(SERVER_CPU);
const [helloPort, elysiaPort, floorPort] = (await freePorts(3)) as [number, number, number];
const scratch = await mkdtemp(join(tmpdir(), 'studio-bench-'));
const sql = createSql(stack.config.DATABASE_URL, { max: 4 });
let failed = false;
let stopNginx = async () => {};
try {
  console.log(
    `read: database ${stack.dbName}, Redis prefix ${stack.config.REDIS_PREFIX}, servers on CPU ${SERVER_CPU}, wrk on CPU ${LOAD_CPU}, ${CONNECTIONS} connections, ${SECONDS} s each`,
  );
  const t0 = performance.now();
  const seed = await seedStorefrontRead(sql);
  console.log(
    `seeded ${seed.instructors} instructors, ${seed.classes} classes, ${seed.occurrences} occurrences in ${Math.round(performance.now() - t0)} ms`,
  );
  const { key } = seed;

  // The classes query of storefrontListClasses, as the service runs it.
  const plan = await sql.unsafe(
    `explain (analyze, buffers, costs off)
    select o.id, o.class_id, c.title, c.discipline, c.level, c.mode, o.starts_at, o.duration_minutes, o.instructor_id, i.name
    from occurrences o
    join classes c on c.id = o.class_id and c.studio_id = o.studio_id
    join instructors i on i.id = o.instructor_id and i.studio_id = o.studio_id
    where o.studio_id = $1 and o.status = 'scheduled' and o.starts_at >= now() and o.starts_at < now() + interval '14 days'
      and c.status = 'scheduled' and c.visibility = 'public'
    order by o.starts_at, o.id limit 500`,
    [seed.studioId],
  );
  console.log(
    `\nEXPLAIN (ANALYZE) of the classes query:\n${plan.map((r) => `  ${r['QUERY PLAN'] ?? r.queryPlan}`).join('\n')}`,
  );

  // (b) plain Bun.serve hello-world and (a) the Storefront through the gateway, all on the server CPU.
  // Each is measured alone while the other idles, in alternating rounds: this VM's speed drifts
  // by tens of percent within a minute, so a ratio is only fair between neighbouring runs.
  stack.spawn('hello', [
    'bun',
    '-e',
    `Bun.serve({ development: false, hostname: '127.0.0.1', port: ${helloPort}, fetch: () => new Response('Hello, world!') })`,
  ]);
  stack.spawn('elysia', [
    'bun',
    '-e',
    `const { Elysia } = await import('elysia'); new Elysia().get('/', () => 'Hello, world!').listen({ development: false, hostname: '127.0.0.1', port: ${elysiaPort} })`,
  ]);
  await waitFor(`http://127.0.0.1:${helloPort}/`);
  const nginx = await startNginx({
    upstream: `http://127.0.0.1:${elysiaPort}`,
    headers: {},
    cpu: SERVER_CPU,
    readyPath: '/',
  });
  stopNginx = nginx.stop;
  await stack.start(['storefront-service', 'gateway']);
  // (d) the same gateway without access lines, on ports of its own: a diagnosis of what they cost;
  // the figure and its verdict are (a)'s, at production's level
  const quiet = await stack.spawnGateway('gateway-warn', undefined, { LOG_LEVEL: 'warn' });
  const helloUrl = `http://127.0.0.1:${helloPort}/`;
  const url = `${stack.config.STOREFRONT_PUBLIC_URL}${PATH}`;
  // what a browser on a studio's site sends; the uncompressed answer is measured too, below
  const headers = { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip, deflate, br' };
  const plainHeaders = { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' };
  const probe = await fetch(url, { headers: plainHeaders });
  const text = await probe.text();
  const wire = await fetch(url, { headers, decompress: false } as RequestInit);
  const wireBody = new Uint8Array(await wire.arrayBuffer());
  const wireBytes = wireBody.byteLength;
  if (probe.status !== 200) throw new Error(`GET ${PATH} answered ${probe.status}: ${text.slice(0, 300)}`);
  const classes = `${(JSON.parse(text) as { classes: unknown[] }).classes.length} classes, `;
  console.log(
    `\nGET ${PATH}: ${classes}${text.length} bytes (${wireBytes} bytes ${wire.headers.get('content-encoding') ?? 'uncompressed'} on the wire to a browser)`,
  );

  // (c) the floor of this read: the gateway's answer as it came over the wire, served from memory
  const answerHeaders: Record<string, string> = {};
  wire.headers.forEach((v, k) => {
    if (k !== 'content-length' && k !== 'date') answerHeaders[k] = v;
  });
  await Bun.write(join(scratch, 'answer'), wireBody);
  const floor = stack.spawn('cached-floor', [
    'bun',
    join(import.meta.dir, 'cached-floor.ts'),
    String(floorPort),
    join(scratch, 'answer'),
    JSON.stringify(answerHeaders),
  ]);
  const floorUrl = `http://127.0.0.1:${floorPort}${PATH}`;
  await waitFor(floorUrl);
  const quietUrl = `${quiet.storefrontUrl}${PATH}`;

  /**
   * One measured run after a second of warm-up, with the CPU per request of `pids` (the row's own processes) and of
   * every Postgres process (the gateway's activity entries; near nothing for the other rows).
   */
  const measure = async (target: string, h?: Record<string, string>, pids?: number[]) => {
    await runWrk(target, { connections: CONNECTIONS, seconds: 1, cpu: LOAD_CPU, headers: h }); // warm-up
    const meter = pids ? cpuMeter(pids) : null;
    const postgres = namedCpuMeter('postgres');
    const r = await runWrk(target, { connections: CONNECTIONS, seconds: SECONDS, cpu: LOAD_CPU, headers: h });
    return Object.assign(r, { cpu: meter?.perRequest(r.requests) ?? null, postgres: postgres.perRequest(r.requests) });
  };
  const anchorUrl = `${nginx.url}/`;
  type Measured = WrkResult & { cpu: CpuPerRequest | null; postgres: CpuPerRequest };
  // the anchor's processes: nginx's master and worker, and Elysia behind it
  const anchorPids = [...withChildren(nginx.pid), stack.pidOf('elysia')];
  type Round = { gateway: Measured; anchor: Measured; hello: Measured; floor: Measured; quiet: Measured };
  const rounds: Round[] = [];
  for (const u of [url, quietUrl]) await warmGateway(u, { connections: CONNECTIONS, cpu: LOAD_CPU, headers });
  const runs: Record<keyof Round, () => Promise<Measured>> = {
    hello: () => measure(helloUrl, undefined, [stack.pidOf('hello')]),
    anchor: () => measure(anchorUrl, undefined, anchorPids),
    gateway: () => measure(url, headers, [stack.pidOf('gateway')]),
    quiet: () => measure(quietUrl, headers, [quiet.child.pid]),
    floor: () => measure(floorUrl, headers, [floor.pid]),
  };
  for (let i = 0; i < ROUNDS; i++) rounds.push(await inTurn(runs, i));
  const plainResult = await measure(url, plainHeaders);

  const row = (name: string, r: Measured) =>
    `| ${name.padEnd(NAME_WIDTH)} | ${r.rps.toFixed(0).padStart(9)} | ${r.p50.toFixed(2).padStart(8)} | ${r.p99.toFixed(2).padStart(8)} | ${String(r.non2xx).padStart(7)} | ${formatCpu(r.cpu).padStart(11)} | ${formatCpu(r.postgres).padStart(11)} |`;
  console.log(
    "\nCPU columns: µs of CPU a request, user+system, of the row's own processes (the anchor: nginx and Elysia) and of all of Postgres",
  );
  console.log(
    `| ${'target'.padEnd(NAME_WIDTH)} | ${'req/s'.padStart(9)} | ${'p50 ms'.padStart(8)} | ${'p99 ms'.padStart(8)} | ${'non-2xx'.padStart(7)} | ${'CPU µs'.padStart(11)} | ${'Postgres µs'.padStart(11)} |`,
  );
  console.log(
    `|${'-'.repeat(NAME_WIDTH + 2)}|${'-'.repeat(11)}|${'-'.repeat(10)}|${'-'.repeat(10)}|${'-'.repeat(9)}|${'-'.repeat(13)}|${'-'.repeat(13)}|`,
  );
  rounds.forEach((r, i) => {
    console.log(row(`round ${i + 1}: Bun.serve hello-world`, r.hello));
    console.log(row(`round ${i + 1}: (b) nginx -> Elysia hello-world`, r.anchor));
    console.log(row(`round ${i + 1}: (a) gateway GET ${PATH}`, r.gateway));
    console.log(row(`round ${i + 1}: (d) gateway, LOG_LEVEL=warn`, r.quiet));
    console.log(row(`round ${i + 1}: (c) Bun floor: the answer from memory`, r.floor));
  });
  console.log(row(`(a') gateway, Accept-Encoding: identity`, plainResult));
  const ratios = rounds.map((r) => r.gateway.rps / r.anchor.rps);
  const ratio = median(ratios);
  const p99 = median(rounds.map((r) => r.gateway.p99));
  console.log(`\nratio (a)/(b) per round: ${ratios.map((x) => `${x.toFixed(2)}×`).join(', ')}`);
  console.log(
    `median ratio: ${ratio.toFixed(2)}×  (target ${formatTarget(TARGET_RATIO)}); against the bare Bun.serve hello-world: ${(median(rounds.map((r) => r.gateway.rps / r.hello.rps)) * 100).toFixed(1)} %`,
  );
  console.log(
    `median gateway p99: ${p99.toFixed(2)} ms  (target ${formatTarget(TARGET_P99)}); nginx -> Elysia p99: ${median(rounds.map((r) => r.anchor.p99)).toFixed(2)} ms`,
  );
  console.log(
    `uncompressed (a')/(b) against the median anchor: ${(plainResult.rps / median(rounds.map((r) => r.anchor.rps))).toFixed(2)}×, p99 ${plainResult.p99.toFixed(2)} ms (for reference; browsers always accept gzip)`,
  );
  const gatewayCpu = median(rounds.map((r) => totalCpu(r.gateway.cpu)));
  const floorCpu = median(rounds.map((r) => totalCpu(r.floor.cpu)));
  console.log(
    `diagnosis: the Bun floor of this read (c)/(b) ${median(rounds.map((r) => r.floor.rps / r.anchor.rps)).toFixed(2)}× at p99 ${median(rounds.map((r) => r.floor.p99)).toFixed(2)} ms (what the runtime alone allows); CPU a request: gateway ${gatewayCpu.toFixed(1)} µs, floor ${floorCpu.toFixed(1)} µs (${(gatewayCpu / floorCpu).toFixed(2)}×)`,
  );
  console.log(
    `diagnosis: the servers' CPU a request (medians, µs): the anchor's nginx and Elysia ${median(rounds.map((r) => totalCpu(r.anchor.cpu))).toFixed(1)}; the gateway ${gatewayCpu.toFixed(1)} and Postgres ${median(rounds.map((r) => totalCpu(r.gateway.postgres))).toFixed(1)} (the activity entry of each call)`,
  );
  const quietRatio = median(rounds.map((r) => r.quiet.rps / r.gateway.rps));
  const quietCpu = median(rounds.map((r) => totalCpu(r.quiet.cpu) / totalCpu(r.gateway.cpu)));
  console.log(
    `access lines: (d)/(a) ${quietRatio.toFixed(3)}× the req/s (target ${formatTarget(TARGET_ACCESS_LINES)}), ${quietCpu.toFixed(3)}× the CPU a request (rounds ${rounds.map((r) => (r.quiet.rps / r.gateway.rps).toFixed(2)).join(', ')}; the paired figure: bun run bench:pair --cached --control --b-env '{"LOG_LEVEL":"warn"}')`,
  );
  for (const r of [...rounds.flatMap((x) => [x.gateway, x.quiet, x.anchor, x.hello, x.floor]), plainResult])
    if (r.errors) console.log(`wrk: ${r.errors}`);
  const runsNot2xx = rounds.flatMap((r) => [r.gateway, r.quiet, r.anchor]).filter((r) => r.non2xx > 0).length;
  report(
    {
      ratio,
      p99,
      accessLines: quietRatio,
      'gateway req/s': median(rounds.map((r) => r.gateway.rps)),
      'anchor req/s': median(rounds.map((r) => r.anchor.rps)),
      'anchor p99 ms': median(rounds.map((r) => r.anchor.p99)),
      'gateway CPU µs a request': gatewayCpu,
      'anchor CPU µs a request': median(rounds.map((r) => totalCpu(r.anchor.cpu))),
    },
    runsNot2xx ? [`${runsNot2xx} runs had answers that were not 2xx`] : [],
  );
} catch (err) {
  console.error(`bench failed: ${(err as Error).stack ?? err}`);
  failed = true;
} finally {
  await stopNginx();
  await sql.end({ timeout: 2 });
  await stack.stop();
  await rm(scratch, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
