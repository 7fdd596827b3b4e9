/**
 * A Redis server of a test's own, on a free port (never the shared one: a test that stops, pauses or kills Redis
 * does it to this), answering by the time the promise resolves. `args`: more `redis-server` options.
 * Whatever a test does or fails to do, none outlives the process that started it.
 */
import type { Subprocess } from 'bun';
import { freePort } from './ports';

const live = new Set<Subprocess>();
process.on('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

export async function startRedisServer(args: string[] = [], port?: number) {
  const at = port ?? (await freePort());
  const proc = Bun.spawn(
    ['redis-server', '--port', String(at), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
    { stdout: 'ignore', stderr: 'ignore' },
  );
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  const answers = () =>
    Bun.connect({ hostname: '127.0.0.1', port: at, socket: { data() {} } }).then(
      (c) => (c.end(), true),
      () => false,
    );
  for (let i = 0; i < 100 && !(await answers()); i++) await Bun.sleep(50);
  return { proc, port: at, url: `redis://127.0.0.1:${at}` };
}
