/** Runs wrk pinned to one core and reads requests/s and latency percentiles from its report. */
import { cpuMeter, totalCpu } from './cpu';
import { caseFlags } from './report';

export interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: string | null;
}

/** Exits 1, naming the Debian package to install, when one of `tools` (command -> package) is not on this machine. */
export function requireTools(tools: Record<string, string>) {
  for (const [tool, pkg] of Object.entries(tools)) {
    if (!Bun.which(tool) && !Bun.file(`/usr/sbin/${tool}`).size) {
      console.error(`error: ${tool} is not installed (apt-get install -y ${pkg})`);
      process.exit(1);
    }
  }
}

function ms(value: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000;
}

/**
 * Load on the gateway alone before a bench's first round (10 s; 1 s in a --quick run): its JIT compiles for the first 8-10 s under load (9-16 µs a request of compiler threads in a
 * 6 s window after 2 s of load, 1-2 µs after that), which a long-running gateway has done long
 * ago. The one-second warm-up of each run is enough for the others, whose code is small (the
 * floor's compiler: under 1 µs a request).
 */
export function warmGateway(url: string, o: { connections: number; cpu: string; headers?: Record<string, string> }) {
  return runWrk(url, { ...o, seconds: caseFlags.quick ? 1 : 10 });
}

/**
 * One round of a bench: every run of `runs`, one after the other, starting with the `round`-th
 * (mod their number). This VM's speed drifts within a minute, so a fixed order would give a target
 * the same place in every round (it put the gateway last in each, docs/benchmarks.md); rotating it
 * gives each target each place in turn.
 */
export async function inTurn<K extends string, R>(
  runs: Record<K, () => Promise<R>>,
  round: number,
): Promise<Record<K, R>> {
  const names = Object.keys(runs) as K[];
  const done = {} as Record<K, R>;
  for (let j = 0; j < names.length; j++) {
    const name = names[(round + j) % names.length]!;
    done[name] = await runs[name]();
  }
  return done;
}

/**
 * One paired round (`bun run bench:pair`, the `hop` case): every target loaded at the same time by its own wrk,
 * 1 s of warm-up, then `seconds` measured; each target's µs of CPU per request (from /proc). The VM's
 * drift falls on all of them alike, so their ratios are steadier than from runs in turn.
 */
export async function cpuLoadedAtOnce(
  targets: { url: string; pid: number; headers?: Record<string, string> }[],
  o: { connections: number; seconds: number; cpu: string },
): Promise<number[]> {
  const load = (seconds: number) =>
    Promise.all(
      targets.map((t) => runWrk(t.url, { connections: o.connections, seconds, cpu: o.cpu, headers: t.headers })),
    );
  await load(1); // warm-up
  const meters = targets.map((t) => cpuMeter([t.pid]));
  const runs = await load(o.seconds);
  for (const r of runs) if (r.non2xx || r.errors) throw new Error(`a run was not all 2xx: ${JSON.stringify(r)}`);
  return runs.map((r, i) => totalCpu(meters[i]!.perRequest(r.requests)));
}

export async function runWrk(
  url: string,
  o: { connections: number; seconds: number; cpu: string; headers?: Record<string, string> },
): Promise<WrkResult> {
  const args = ['taskset', '-c', o.cpu, 'wrk', '-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency'];
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const p = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`wrk failed (${code}): ${err || out}`);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p50 = ms(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '');
  const p99 = ms(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '');
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors:.*/.exec(out)?.[0] ?? null;
  return { rps, p50, p99, requests, non2xx, errors };
}
