#!/usr/bin/env bun
/**
 * `bun run bench:turns`: where the cached read's tail goes, on sockets (issue 22). Starts storefront-service and a
 * gateway as production runs them (default configuration), loads the cached Storefront read with wrk (50
 * connections, CPU 1), and records with `perf` on the servers' core (CPU 0) the system calls, the context switches
 * and a CPU sample every 200 µs. It then cuts the gateway's main thread into its event loop's turns, from one return
 * of `epoll_pwait2` to the next call, and reports how long they take and what the long ones (over LONG_MS) are made
 * of: time the thread waited for its core while something else ran on it (named), and on it, where its samples fell
 * (the kernel, Bun's native code, JIT-compiled JavaScript, libc) with the native addresses the long turns hold and
 * the others do not. Bun's binary has no symbols; the addresses named in KNOWN were identified by hand for the Bun
 * version they name (docs/benchmarks.md, "The cached read's long turns").
 *
 * Needs `perf` (linux-perf) and root. At this load a turn serves about 35 reads, each of which waits for the whole
 * turn, so a turn of 5 ms puts every read in it near the p99 target.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql } from '@studio/shared/io';
import { seedStorefrontRead } from './seed';
import { createBenchStack } from './stack';
import { quantile } from './stats';
import { requireTools, runWrk, warmGateway, wrkOptions } from './wrk';

const { SECONDS, CONNECTIONS, SERVER_CPU, LOAD_CPU } = wrkOptions({ seconds: 4, rounds: 1, connections: 50 });
const LONG_MS = Number(process.env.BENCH_LONG_MS ?? 3.5);
const SAMPLE_US = 200;
/** Native addresses identified by hand, by Bun version. */
const KNOWN: Record<string, Record<string, string>> = {
  '1.4.5': {
    '1d4988b':
      "the allocator's look for free pages to hand back (mimalloc's purge_holes, every 100 ms before the loop waits; off with MIMALLOC_PURGE_HOLES=0)",
  },
};
/** epoll_pwait2, epoll_pwait, epoll_wait on x86-64. */
const EPOLL = new Set([441, 281, 232]);

interface Turn {
  ms: number;
  /** Time the thread was runnable but off its core, by what ran instead. */
  preempted: Map<string, number>;
  samples: string[];
}

const EVENT = /^\s*(.+?)\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+(\S+):\s*(.*)$/;
const SWITCH = /==> next_comm=(.*?) next_pid=(\d+)/;

/** The main thread's turns in `perf script` output, with what ran on its core while it waited. */
function turnsOf(script: string, tid: number): Turn[] {
  const turns: Turn[] = [];
  let turn: Turn | null = null;
  let start = 0;
  let waiting = false;
  let other: { comm: string; at: number } | null = null;
  for (const line of script.split('\n')) {
    const m = EVENT.exec(line);
    if (!m) continue;
    const [, , pid, time, event, rest] = m as unknown as [string, string, string, string, string, string];
    const at = Number(time);
    if (event === 'sched:sched_switch') {
      const s = SWITCH.exec(rest);
      if (!s) continue;
      if (other && turn && !waiting)
        turn.preempted.set(other.comm, (turn.preempted.get(other.comm) ?? 0) + (at - other.at) * 1000);
      other = Number(s[2]) === tid ? null : { comm: s[1]!, at };
      continue;
    }
    if (Number(pid) !== tid) continue;
    if (event === 'cpu-clock' && turn && !waiting) turn.samples.push(rest.trim());
    const nr = /^NR (\d+)/.exec(rest);
    if (!nr || !EPOLL.has(Number(nr[1]))) continue;
    if (event === 'raw_syscalls:sys_enter' && turn && !waiting) {
      turn.ms = (at - start) * 1000;
      turns.push(turn);
      waiting = true;
    } else if (event === 'raw_syscalls:sys_exit') {
      turn = { ms: 0, preempted: new Map(), samples: [] };
      start = at;
      waiting = false;
    }
  }
  return turns;
}

/** Where a sample fell: its dso, as a place. */
function placeOf(sample: string): string {
  if (sample.includes('kernel.kallsyms')) return 'kernel';
  if (sample.includes('/bun')) return 'Bun native';
  // JIT-compiled code: named by the runtime's perf map when it writes one, else an anonymous mapping
  if (sample.includes('perf-') || /^7f[0-9a-f]{10} \(\[unknown\]\)/.test(sample)) return 'JIT-compiled JavaScript';
  if (sample.includes('libc')) return 'libc';
  return 'other';
}

const pct = (n: number, of: number) => `${((100 * n) / Math.max(of, 1)).toFixed(1)} %`;

function count<T>(items: T[], key: (t: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of items) m.set(key(t), (m.get(key(t)) ?? 0) + 1);
  return m;
}

/** The report: the turns' lengths, then the long ones taken apart against the others. */
function report(turns: Turn[], seconds: number, bunVersion: string) {
  const ms = turns.map((t) => t.ms);
  const long = turns.filter((t) => t.ms > LONG_MS);
  const rest = turns.filter((t) => t.ms <= LONG_MS);
  console.log(
    `turns: ${turns.length} in ${seconds} s; ms p50 ${quantile(ms, 0.5).toFixed(2)}, p90 ${quantile(ms, 0.9).toFixed(2)}, p99 ${quantile(ms, 0.99).toFixed(2)}, max ${quantile(ms, 1).toFixed(2)}`,
  );
  const longMs = long.reduce((s, t) => s + t.ms, 0);
  console.log(
    `turns over ${LONG_MS} ms: ${long.length} (${(long.length / seconds).toFixed(1)} a second, ${longMs.toFixed(0)} ms)`,
  );
  const preempted = new Map<string, number>();
  for (const t of long) for (const [c, v] of t.preempted) preempted.set(c, (preempted.get(c) ?? 0) + v);
  const off = [...preempted.values()].reduce((s, v) => s + v, 0);
  console.log(
    `  off the core while runnable: ${off.toFixed(0)} ms (${pct(off, longMs)}), behind: ${[...preempted]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([c, v]) => `${c} ${v.toFixed(1)} ms`)
      .join(', ')}`,
  );
  const inLong = long.flatMap((t) => t.samples);
  const inRest = rest.flatMap((t) => t.samples);
  console.log(`  on the core: ${(inLong.length * SAMPLE_US) / 1000} ms sampled`);
  for (const [place, n] of [...count(inLong, placeOf)].sort((a, b) => b[1] - a[1]))
    console.log(
      `    ${place.padEnd(24)} ${pct(n, inLong.length).padStart(7)} (other turns: ${pct(count(inRest, placeOf).get(place) ?? 0, inRest.length)})`,
    );
  const native = (s: string[]) =>
    count(
      s.filter((x) => placeOf(x) === 'Bun native'),
      (x) => x.split(' ')[0]!,
    );
  const restNative = native(inRest);
  console.log("  Bun native addresses of the long turns (share of their samples; of the other turns'):");
  for (const [addr, n] of [...native(inLong)].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
    const known = KNOWN[bunVersion]?.[addr];
    console.log(
      `    ${addr.padStart(9)} ${pct(n, inLong.length).padStart(7)} (${pct(restNative.get(addr) ?? 0, inRest.length)})${known ? `  ${known}` : ''}`,
    );
  }
}

requireTools({ perf: 'linux-perf', wrk: 'wrk' });
const stack = await createBenchStack(SERVER_CPU);
const dir = await mkdtemp(join(tmpdir(), 'studio-bench-turns-'));
try {
  const sql = createSql(stack.config.DATABASE_URL, { max: 4 });
  const { key } = await seedStorefrontRead(sql);
  await sql.end();
  await stack.start(['storefront-service']);
  const gateway = await stack.spawnGateway('gateway');
  const url = `${gateway.storefrontUrl}/v1/classes`;
  const headers = { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip, deflate, br' };
  await warmGateway(url, { connections: CONNECTIONS, cpu: LOAD_CPU, headers });
  const data = join(dir, 'turns.data');
  const events = 'raw_syscalls:sys_enter,raw_syscalls:sys_exit,sched:sched_switch';
  const perf = Bun.spawn(
    [
      'taskset',
      '-c',
      LOAD_CPU,
      'perf',
      'record',
      '-e',
      events,
      '-e',
      'cpu-clock',
      '-c',
      `${SAMPLE_US * 1000}`,
      '-C',
      SERVER_CPU,
      '-o',
      data,
      '--',
      'sleep',
      `${SECONDS}`,
    ],
    { stdout: 'ignore', stderr: 'ignore' },
  );
  const load = await runWrk(url, { connections: CONNECTIONS, seconds: SECONDS + 1, cpu: LOAD_CPU, headers });
  await perf.exited;
  const fields = 'comm,tid,cpu,time,event,trace,ip,dso';
  const script = await new Response(
    Bun.spawn(['perf', 'script', '-i', data, '-F', fields], { stdout: 'pipe', stderr: 'ignore' }).stdout,
  ).text();
  console.log(
    `bench:turns: the cached read, ${CONNECTIONS} connections; ${Math.round(load.rps)} req/s, p50 ${load.p50.toFixed(2)} ms, p99 ${load.p99.toFixed(2)} ms (perf's own cost included)`,
  );
  report(turnsOf(script, gateway.child.pid), SECONDS, Bun.version);
} finally {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(0);
