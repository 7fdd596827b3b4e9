import { join } from 'node:path';
/**
 * The `hop` case (`bun run bench hop`): the cost of the gateway's forwarding hop (issue 10). An uncached
 * Management read (`GET /v1/instructors`, 20 rows), in one run and the same pinning
 * (servers on BENCH_SERVER_CPU, wrk on BENCH_LOAD_CPU):
 *   direct   management-service, with the gateway's signed headers
 *   nginx    nginx (Debian) in front of it, adding fixed signed headers (kept for the diagnosis)
 *   kong-like  nginx + Lua doing a gateway's work per request (scripts/bench/kong-like.ts): what an
 *              operator would deploy instead of us, the peer of the verdict
 *   bun floor  Bun.serve over the gateway's own keep-alive pool, adding the same fixed headers and
 *              nothing else (scripts/bench/bare-proxy.ts): the least a Bun process pays for the hop
 *   gateway  our gateway: key check, rate limit, activity, signed forward
 * in BENCH_ROUNDS alternating rounds of BENCH_SECONDS, each round starting one target later
 * (`inTurn`: the VM's drift within a round favours none), then the gateway and the floor loaded at
 * once in as many rounds (their CPU ratio, the verdict's); prints req/s, p50/p99, the CPU each
 * process spent per request (from /proc: steadier than req/s on a drifting VM) and the
 * median ratios. The verdict (issue 53; its targets in cases.ts): the gateway's CPU per request over the floor's
 * (loaded at once; both on Bun.serve), its req/s and p99 over the Kong-like peer's. The configuration is
 * production's (LOG_LEVEL info: access lines, activity and metrics on). Skips nginx, with a
 * message, when it is not installed.
 */
import { type Caller, hashKey, SCOPES, signedHeaders } from '@studio/shared';
import { freePorts } from '../lib/ports';
import { formatTarget, target } from './cases';
import { type CpuPerRequest, cpuMeter, formatCpu, namedCpuMeter, totalCpu, withChildren } from './cpu';
import { INSTRUCTORS_PATH, seedInstructors } from './instructors';
import { kongLikeAvailable, startKongLike } from './kong-like';
import { nginxPath, startNginx } from './nginx';
import { caseOptions, report } from './report';
import { createBenchStack, profiled, waitFor } from './stack';
import { median } from './stats';
import { cpuLoadedAtOnce, inTurn, requireTools, runWrk, type WrkResult, warmGateway } from './wrk';

/** A wrk run and the CPU per request behind it (`proxy` null when there is none). */
type Run = WrkResult & { proxy: CpuPerRequest | null; service: CpuPerRequest; postgres: CpuPerRequest };

const { SECONDS, ROUNDS, SERVER_CPU, LOAD_CPU } = caseOptions({ seconds: 5, rounds: 3 });
const CONNECTIONS = 50;
const PATH = INSTRUCTORS_PATH;
/** The gateway's CPU per request over the Bun floor's (issue 53: both serve with Bun.serve); against the Kong-like peer. */
const [FLOOR_CPU, PEER_RPS, PEER_P99] = [target('hop', 'floorCpu'), target('hop', 'peerRps'), target('hop', 'peerP99')];

requireTools({ wrk: 'wrk', taskset: 'util-linux' });
if (!nginxPath()) console.log('nginx is not installed (apt-get install -y nginx): measuring direct and gateway only');
else if (!kongLikeAvailable())
  console.log('nginx has no Lua module (apt-get install -y libnginx-mod-http-lua lua-resty-core): no Kong-like row');

const stack = await createBenchStack(SERVER_CPU);
let failed = false;
try {
  const { studio, secret } = await seedInstructors(stack.config.DATABASE_URL, 'Bench hop');
  await stack.start(['management-service', 'gateway']);

  const caller: Caller = {
    studioId: studio.id,
    keyId: secret.record.id,
    scopes: [...SCOPES],
    operationId: 'managementListInstructors',
    requestId: 'req_bench',
  };
  // a signature is valid for 60 s: each run gets a fresh one
  const signed = () => signedHeaders(stack.config.GATEWAY_SECRET, 'GET', PATH, caller);
  const service = stack.pidOf('management-service');
  /** One run, with the CPU per request of the proxy in front (none: direct), the service and Postgres. */
  const measure = async (url: string, headers: Record<string, string>, proxy: number[] = []): Promise<Run> => {
    await runWrk(url, { connections: CONNECTIONS, seconds: 1, cpu: LOAD_CPU, headers }); // warm-up
    const meters = { proxy: cpuMeter(proxy), service: cpuMeter([service]), postgres: namedCpuMeter('postgres') };
    const r = await runWrk(url, { connections: CONNECTIONS, seconds: SECONDS, cpu: LOAD_CPU, headers });
    return {
      ...r,
      proxy: proxy.length ? meters.proxy.perRequest(r.requests) : null,
      service: meters.service.perRequest(r.requests),
      postgres: meters.postgres.perRequest(r.requests),
    };
  };
  const viaNginx = async () => {
    const nginx = await startNginx({
      upstream: stack.config.MANAGEMENT_SERVICE_URL,
      headers: signed(),
      cpu: SERVER_CPU,
      readyPath: '/readyz',
    });
    try {
      return await measure(nginx.url + PATH, {}, withChildren(nginx.pid));
    } finally {
      await nginx.stop();
    }
  };

  const viaPeer = async () => {
    const peer = await startKongLike({
      upstream: stack.config.MANAGEMENT_SERVICE_URL,
      secret: stack.config.GATEWAY_SECRET,
      keys: [
        {
          sha256: hashKey(secret.key),
          studioId: studio.id,
          keyId: secret.record.id,
          scopes: secret.record.scopes,
        },
      ],
      routes: { [`GET ${PATH}`]: { operation: 'managementListInstructors', scope: 'instructors:read' } },
      cpu: SERVER_CPU,
      readyPath: '/readyz',
    });
    try {
      return await measure(peer.url + PATH, { authorization: `Bearer ${secret.key}` }, withChildren(peer.pid));
    } finally {
      await peer.stop();
    }
  };

  /** A fresh floor (its fixed signature lasts 60 s), for the length of `use`. */
  const withFloor = async <T>(use: (url: string, pid: number) => Promise<T>): Promise<T> => {
    const [port] = await freePorts(1);
    const child = stack.spawn('bare-proxy', [
      'bun',
      ...profiled('floor'),
      join(import.meta.dir, 'bare-proxy.ts'),
      String(port),
      stack.config.MANAGEMENT_SERVICE_URL,
      JSON.stringify(signed()),
    ]);
    try {
      await waitFor(`http://127.0.0.1:${port}/readyz`);
      return await use(`http://127.0.0.1:${port}${PATH}`, child.pid);
    } finally {
      await stack.stopChild(child);
    }
  };
  const viaFloor = () => withFloor((url, pid) => measure(url, {}, [pid]));

  type Round = { direct: Run; nginx: Run | null; peer: Run | null; floor: Run; gateway: Run };
  const rounds: Round[] = [];
  const gatewayHeaders = { authorization: `Bearer ${secret.key}` };
  await warmGateway(stack.config.MANAGEMENT_PUBLIC_URL + PATH, {
    connections: CONNECTIONS,
    cpu: LOAD_CPU,
    headers: gatewayHeaders,
  });
  const runs: Record<keyof Round, () => Promise<Run | null>> = {
    direct: () => measure(stack.config.MANAGEMENT_SERVICE_URL + PATH, signed()),
    nginx: async () => (nginxPath() ? await viaNginx() : null),
    peer: async () => (kongLikeAvailable() ? await viaPeer() : null),
    floor: viaFloor,
    gateway: () => measure(stack.config.MANAGEMENT_PUBLIC_URL + PATH, gatewayHeaders, [stack.pidOf('gateway')]),
  };
  for (let i = 0; i < ROUNDS; i++) rounds.push((await inTurn(runs, i)) as Round);

  /**
   * The gateway and the floor loaded at the same time, half the connections each, by two wrk on the
   * load core (`bun run bench:pair`'s method): the VM's drift falls on both alike, so their CPU ratio is
   * steadier than one from runs in turn. A fresh floor each round.
   */
  const pairedRound = async (floorUrl: string, floorPid: number) => {
    const [g, f] = await cpuLoadedAtOnce(
      [
        { url: stack.config.MANAGEMENT_PUBLIC_URL + PATH, headers: gatewayHeaders, pid: stack.pidOf('gateway') },
        { url: floorUrl, pid: floorPid },
      ],
      { connections: CONNECTIONS / 2, seconds: SECONDS, cpu: LOAD_CPU },
    );
    return g! / f!;
  };
  const paired: number[] = [];
  for (let i = 0; i < ROUNDS; i++) paired.push(await withFloor(pairedRound));

  const row = (name: string, r: Run) =>
    `| ${name.padEnd(28)} | ${r.rps.toFixed(0).padStart(8)} | ${r.p50.toFixed(2).padStart(8)} | ${r.p99.toFixed(2).padStart(8)} | ${String(r.non2xx).padStart(7)} | ${formatCpu(r.proxy).padStart(13)} | ${formatCpu(r.service).padStart(13)} | ${formatCpu(r.postgres).padStart(13)} |`;
  console.log(
    `\nGET ${PATH} (20 rows, never cached), ${CONNECTIONS} connections, ${SECONDS} s per run, servers on CPU ${SERVER_CPU}, wrk on CPU ${LOAD_CPU}`,
  );
  console.log(
    'CPU columns: µs of CPU per request, user+system, of the proxy in front, the service, and all of Postgres',
  );
  console.log(
    `| ${'target'.padEnd(28)} | ${'req/s'.padStart(8)} | ${'p50 ms'.padStart(8)} | ${'p99 ms'.padStart(8)} | ${'non-2xx'.padStart(7)} | ${'proxy CPU'.padStart(13)} | ${'service CPU'.padStart(13)} | ${'Postgres CPU'.padStart(13)} |`,
  );
  console.log(
    `|${'-'.repeat(30)}|${'-'.repeat(10)}|${'-'.repeat(10)}|${'-'.repeat(10)}|${'-'.repeat(9)}|${'-'.repeat(15)}|${'-'.repeat(15)}|${'-'.repeat(15)}|`,
  );
  rounds.forEach((r, i) => {
    console.log(row(`round ${i + 1}: direct`, r.direct));
    if (r.nginx) console.log(row(`round ${i + 1}: nginx`, r.nginx));
    if (r.peer) console.log(row(`round ${i + 1}: kong-like`, r.peer));
    console.log(row(`round ${i + 1}: bun floor`, r.floor));
    console.log(row(`round ${i + 1}: gateway`, r.gateway));
  });
  const med = (pick: (r: Round) => Run | null) => {
    const rs = rounds.map(pick).filter((r): r is Run => r !== null);
    return rs.length
      ? {
          rps: median(rs.map((r) => r.rps)),
          p99: median(rs.map((r) => r.p99)),
          proxy: median(rs.map((r) => totalCpu(r.proxy))),
          service: median(rs.map((r) => totalCpu(r.service))),
          postgres: median(rs.map((r) => totalCpu(r.postgres))),
        }
      : null;
  };
  const [direct, nginx, peer, floor, gateway] = [
    med((r) => r.direct),
    med((r) => r.nginx),
    med((r) => r.peer),
    med((r) => r.floor),
    med((r) => r.gateway),
  ];
  console.log(
    `\nmedians: direct ${direct!.rps.toFixed(0)} req/s p99 ${direct!.p99.toFixed(2)} ms; gateway ${gateway!.rps.toFixed(0)} req/s p99 ${gateway!.p99.toFixed(2)} ms` +
      (nginx ? `; nginx ${nginx.rps.toFixed(0)} req/s p99 ${nginx.p99.toFixed(2)} ms` : ''),
  );
  console.log(
    `gateway / direct: ${(gateway!.rps / direct!.rps).toFixed(2)}× req/s; gateway / bun floor: ${(gateway!.rps / floor!.rps).toFixed(2)}× req/s`,
  );
  console.log(
    `CPU per request (medians, µs): proxy ${nginx ? `nginx ${nginx.proxy.toFixed(0)}, ` : ''}bun floor ${floor!.proxy.toFixed(0)}, gateway ${gateway!.proxy.toFixed(0)}; ` +
      `service direct ${direct!.service.toFixed(0)}${nginx ? `, behind nginx ${nginx.service.toFixed(0)}` : ''}, behind the gateway ${gateway!.service.toFixed(0)}; ` +
      `Postgres direct ${direct!.postgres.toFixed(0)}${peer ? `, behind the kong-like ${peer.postgres.toFixed(0)}` : ''}, behind the gateway ${gateway!.postgres.toFixed(0)} (its activity entries too)`,
  );
  if (nginx)
    console.log(
      `diagnosis: gateway / nginx ${(gateway!.rps / nginx.rps).toFixed(2)}× req/s, bun floor / nginx ${(floor!.rps / nginx.rps).toFixed(2)}× req/s (what the runtime alone allows)`,
    );
  // the verdict takes the paired ratio: the runs in turn gave 1.22-1.53 for the same code within an hour
  const cpuRatio = median(paired);
  console.log(
    `gateway / bun floor: ${cpuRatio.toFixed(2)}× CPU per request loaded at once (rounds ${paired.map((x) => x.toFixed(2)).join(', ')}; target ${formatTarget(FLOOR_CPU)}), ${(gateway!.proxy / floor!.proxy).toFixed(2)}× from the runs in turn`,
  );
  const figures: Record<string, number> = {
    floorCpu: cpuRatio,
    'gateway req/s': gateway!.rps,
    'gateway p99 ms': gateway!.p99,
    'gateway CPU µs a request': gateway!.proxy,
    'floor CPU µs a request': floor!.proxy,
  };
  if (peer) {
    const rpsRatio = gateway!.rps / peer.rps;
    const p99Ratio = gateway!.p99 / peer.p99;
    console.log(
      `kong-like: ${peer.rps.toFixed(0)} req/s p99 ${peer.p99.toFixed(2)} ms, ${peer.proxy.toFixed(0)} µs CPU per request; ` +
        `gateway / kong-like: ${rpsRatio.toFixed(2)}× req/s (target ${formatTarget(PEER_RPS)}), ${p99Ratio.toFixed(2)}× p99 (target ${formatTarget(PEER_P99)})`,
    );
    Object.assign(figures, { peerRps: rpsRatio, peerP99: p99Ratio, 'peer req/s': peer.rps });
  }
  const not2xx = rounds.some(
    (r) =>
      r.gateway.non2xx > 0 ||
      r.direct.non2xx > 0 ||
      r.floor.non2xx > 0 ||
      (r.nginx?.non2xx ?? 0) > 0 ||
      (r.peer?.non2xx ?? 0) > 0,
  );
  // without the Kong-like peer (no nginx or no Lua) its two figures are missing, and the runner says so
  report(figures, not2xx ? ['a run had answers that were not 2xx'] : []);
} catch (err) {
  console.error(`bench failed: ${(err as Error).stack ?? err}`);
  failed = true;
} finally {
  await stack.stop();
}
process.exit(failed ? 1 : 0);
