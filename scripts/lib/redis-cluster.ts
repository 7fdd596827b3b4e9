/**
 * A three-master Redis Cluster of its own, for the tests that must pass on a cluster too
 * (docs/design/scale-out.md): `redis-server --cluster-enabled yes` on three free ports and
 * `redis-cli --cluster create`, no persistence, in a temporary directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './ports';

async function run(args: string[]) {
  const p = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${args.join(' ')} failed (${code}): ${err || out}`);
  return out;
}

export async function startRedisCluster() {
  if (!Bun.which('redis-server') || !Bun.which('redis-cli'))
    throw new Error('the cluster tests need redis-server and redis-cli (apt-get install -y redis-server)');
  const dir = await mkdtemp(join(tmpdir(), 'studio-redis-cluster-'));
  const ports = await freePorts(3);
  const stop = async () => {
    for (const port of ports) await run(['redis-cli', '-p', String(port), 'shutdown', 'nosave']).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await createCluster(dir, ports);
  } catch (err) {
    await stop(); // the nodes started so far are daemons: nothing else would stop them
    throw err;
  }
  return {
    /** For REDIS_CLUSTER_NODES. */
    nodes: ports.map((p) => `redis://127.0.0.1:${p}`).join(','),
    ports,
    stop,
  };
}

async function createCluster(dir: string, ports: number[]) {
  for (const port of ports) {
    await run([
      'redis-server',
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout',
      '2000',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'yes',
      '--dir',
      dir,
      '--logfile',
      join(dir, `${port}.log`),
      '--pidfile',
      join(dir, `${port}.pid`),
    ]);
  }
  for (const port of ports) {
    for (
      let i = 0;
      i < 100 && !(await run(['redis-cli', '-p', String(port), 'ping']).catch(() => '')).includes('PONG');
      i++
    )
      await Bun.sleep(50);
  }
  await run([
    'redis-cli',
    '--cluster',
    'create',
    ...ports.map((p) => `127.0.0.1:${p}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ]);
  for (let i = 0; i < 100; i++) {
    const states = await Promise.all(
      ports.map((p) => run(['redis-cli', '-p', String(p), 'cluster', 'info']).catch(() => '')),
    );
    if (states.every((s) => s.includes('cluster_state:ok'))) break;
    await Bun.sleep(100);
  }
}
