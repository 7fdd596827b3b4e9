/**
 * CPU time of processes, from /proc (Linux): what a bench reports as microseconds of CPU per
 * request. On a VM whose speed drifts by tens of percent within a minute, the CPU a process
 * spends per request is steadier than requests per second, and it says where the time goes.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 1e6 / (Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()) || 100);

/** utime and stime of one process (all its threads), or zeros once it is gone. */
function ticksOf(pid: number): [number, number] {
  try {
    // the fields after the command name, which may itself hold spaces or parentheses
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)!.split(' ');
    return [Number(f[11]), Number(f[12])];
  } catch {
    return [0, 0];
  }
}

/** Processes whose command name is `name` (e.g. every Postgres backend). */
export function pidsNamed(name: string): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
    } catch {
      return false;
    }
  });
}

/** A process and its children (nginx's master and its worker). */
export function withChildren(pid: number): number[] {
  return [pid, ...readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((p) => {
    try {
      return Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ').at(-1)!.split(' ')[1]) === pid;
    } catch {
      return false;
    }
  })];
}

export interface CpuPerRequest { user: number; system: number }

/** Starts counting the CPU of these processes; `perRequest(n)` gives µs of user and system time per request. */
export function cpuMeter(pids: number[]) {
  const sum = () => pids.map(ticksOf).reduce((a, b) => [a[0] + b[0], a[1] + b[1]], [0, 0]);
  const start = sum();
  return {
    perRequest(requests: number): CpuPerRequest {
      const end = sum();
      return { user: ((end[0] - start[0]) * TICK_US) / requests, system: ((end[1] - start[1]) * TICK_US) / requests };
    },
  };
}

export const formatCpu = (c: CpuPerRequest | null) => (c ? `${(c.user + c.system).toFixed(0)} (${c.user.toFixed(0)}+${c.system.toFixed(0)})` : '-');
