#!/usr/bin/env bun
/**
 * `bun run bench:runtime`: what Bun's own calls cost a request, on sockets (issue 22). The gateway makes calls on
 * every request that the Bun floor of `bench:hop` and `bench` does not: it reads the key from the request's headers,
 * asks for the caller's address, sets the answer's own headers and signs the forwarded call. Each is weighed alone:
 * two Bun.serve processes on the server core (scripts/bench/runtime-server.ts) answer the same small JSON body from
 * memory, A with nothing else and B with the call, and two wrk on the load core load both at once (`bench:pair`'s
 * method: the VM's drift falls on both alike), with the cached read's headers (a key and a browser's
 * Accept-Encoding). Prints B's CPU per request over A's, each round and the median, and the difference in µs; the
 * first row is A against A, the noise. What no code of ours can remove shows here, measured, not supposed. The last
 * four rows weigh a cached read's calls together, and the same work on a front on Bun.listen (B is then that front:
 * its requests parsed by hand, by llhttp, and by llhttp into a `Request` answered by a `Response`): what leaving
 * Bun.serve would save. `bun run bench:runtime cached llhttp` weighs only the calls named.
 */
import { join } from 'node:path';
import { freePorts } from '../lib/ports';
import { CALL_NAMES, CALLS, type RuntimeCall } from './runtime-calls';
import { waitFor } from './stack';
import { median } from './stats';
import { cpuLoadedAtOnce, requireTools, wrkOptions } from './wrk';

const { SECONDS, ROUNDS, CONNECTIONS, SERVER_CPU, LOAD_CPU } = wrkOptions({ seconds: 4, rounds: 5, connections: 25 });
/** What `bun run bench` sends (the key's text does not matter here: nothing checks it). */
const HEADERS = {
  authorization: `Bearer svc_pk_${'a'.repeat(32)}`,
  'accept-encoding': 'gzip, deflate, br',
};

requireTools({ wrk: 'wrk', taskset: 'util-linux' });

type Server = { url: string; pid: number; headers: Record<string, string> };

/** A server making `call` on every request, on the server core, for the length of `use`. */
async function withServer<T>(call: RuntimeCall, use: (s: Server) => Promise<T>): Promise<T> {
  const [port] = (await freePorts(1)) as [number];
  const child = Bun.spawn(
    ['taskset', '-c', SERVER_CPU, 'bun', join(import.meta.dir, 'runtime-server.ts'), String(port), call],
    { stdout: 'inherit', stderr: 'inherit' },
  );
  try {
    const url = `http://127.0.0.1:${port}/v1/classes`;
    await waitFor(url);
    return await use({ url, pid: child.pid, headers: HEADERS });
  } finally {
    child.kill('SIGTERM');
    await child.exited;
  }
}

/** ROUNDS rounds of A (no call) and B (`call`) loaded at once: B/A of the CPU per request, and B - A in µs. */
async function rounds(a: Server, b: Server) {
  const ratios: number[] = [];
  const extra: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const [ca, cb] = (await cpuLoadedAtOnce([a, b], {
      connections: CONNECTIONS,
      seconds: SECONDS,
      cpu: LOAD_CPU,
    })) as [number, number];
    ratios.push(cb / ca);
    extra.push(cb - ca);
    base.push(ca);
  }
  return { ratios, extra: median(extra), base: median(base) };
}

const weigh = (call: RuntimeCall) => withServer('none', (a) => withServer(call, (b) => rounds(a, b)));

console.log(
  `A Bun.serve answering from memory, B the same with the call (the last rows: fronts on Bun.listen); both loaded at once, ${CONNECTIONS} connections each, ${ROUNDS} rounds of ${SECONDS} s, servers on CPU ${SERVER_CPU}, wrk on CPU ${LOAD_CPU}\n`,
);
console.log('| call (B) | B/A CPU a request, median (rounds) | µs a request over A | A µs a request |');
console.log('|---|---|---|---|');
/** `bun run bench:runtime cached listen`: only the calls named (A against A, the noise, always first). */
const named = process.argv.slice(2);
for (const c of named) if (!CALLS.includes(c as RuntimeCall)) throw new Error(`call: one of ${CALLS.join(', ')}`);
for (const call of CALLS.filter((c) => c === 'none' || !named.length || named.includes(c))) {
  const r = await weigh(call);
  const name = call === 'none' ? 'none (A against A: the noise)' : CALL_NAMES[call];
  const each = r.ratios.map((x) => x.toFixed(3)).join(', ');
  console.log(
    `| ${name} | **${median(r.ratios).toFixed(3)}** (${each}) | ${r.extra.toFixed(2)} | ${r.base.toFixed(1)} |`,
  );
}
