/**
 * CPU time of processes, from /proc (Linux): what a bench reports as microseconds of CPU per
 * request. On a VM whose speed drifts by tens of percent within a minute, the CPU a process
 * spends per request is steadier than requests per second, and it says where the time goes.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 1e6 / (Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()) || 100);

/** Every process now running. */
const processes = () =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);

/** A file of /proc/<pid>, or null once the process is gone. */
function procFile(pid: number, name: 'stat' | 'comm'): string | null {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return null;
  }
}

/** The fields of /proc/<pid>/stat after the command name (which may itself hold spaces or parentheses): [0] state, [1] ppid, [11] utime, [12] stime. */
const statFields = (pid: number) => procFile(pid, 'stat')?.split(') ').at(-1)?.split(' ') ?? null;

/** utime and stime of one process (all its threads), or null once it is gone. */
function ticksOf(pid: number): [number, number] | null {
  const f = statFields(pid);
  return f ? [Number(f[11]), Number(f[12])] : null;
}

/** Processes whose command name is `name` (e.g. every Postgres backend). */
const pidsNamed = (name: string): number[] => processes().filter((pid) => procFile(pid, 'comm')?.trim() === name);

/** A process and its children (nginx's master and its worker). */
export const withChildren = (pid: number): number[] => [
  pid,
  ...processes().filter((p) => Number(statFields(p)?.[1]) === pid),
];

export interface CpuPerRequest {
  user: number;
  system: number;
}

/**
 * Starts counting the CPU of these processes; `perRequest(n)` gives µs of user and system time per request. `pids`
 * may be a function, asked at the start and at the end, for processes that come and go (Postgres's backends, as the
 * pools open and close connections): one started meanwhile counts from its start, and one gone by the end is left
 * out, as what it spent since the start went with it (counting its start alone would make the figure negative).
 */
export function cpuMeter(pids: number[] | (() => number[])) {
  const list = typeof pids === 'function' ? pids : () => pids;
  const ticks = () => {
    const m = new Map<number, [number, number]>();
    for (const pid of list()) {
      const t = ticksOf(pid);
      if (t) m.set(pid, t);
    }
    return m;
  };
  const start = ticks();
  return {
    perRequest(requests: number): CpuPerRequest {
      let user = 0;
      let system = 0;
      for (const [pid, [u, s]] of ticks()) {
        const [u0, s0] = start.get(pid) ?? [0, 0];
        user += u - u0;
        system += s - s0;
      }
      return { user: (user * TICK_US) / requests, system: (system * TICK_US) / requests };
    },
  };
}

/** `cpuMeter` over every process named `name`, as they come and go (e.g. every Postgres backend). */
export const namedCpuMeter = (name: string) => cpuMeter(() => pidsNamed(name));

/** User and system time together, µs (0 for no process). */
export const totalCpu = (c: CpuPerRequest | null) => (c ? c.user + c.system : 0);

export const formatCpu = (c: CpuPerRequest | null) =>
  c ? `${totalCpu(c).toFixed(0)} (${c.user.toFixed(0)}+${c.system.toFixed(0)})` : '-';
