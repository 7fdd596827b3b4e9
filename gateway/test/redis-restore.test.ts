/**
 * Revocation that nothing can undo: a key used once (its live record cached in
 * Redis), Redis saved and killed, the key revoked while Redis is down, Redis restarted from
 * its dump with the live record in it. Every replica must refuse the key once Redis is
 * back, whatever Redis restored: a record cached before a replica's last reconnect is
 * judged by Postgres again.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisNames } from '@studio/shared';
import { connectRedis, createRedis, quitRedis } from '@studio/shared/io';
import { freePort } from '../../scripts/lib/ports';
import { startRedisServer } from '../../scripts/lib/throwaway-redis';
import { expectProblem, type Stack, serveSurface, startStack } from '../../test/harness';
import { needs } from '../../test/needs';
import { createGateway, type Gateway } from '../src/app';

needs('redis', 'redis-server').describe('Redis restored from its dump', () => {
  let s: Stack;
  let dir = '';
  let port = 0;
  let proc: ReturnType<typeof Bun.spawn>;
  let replica: Gateway;
  let replicaServer: ReturnType<typeof serveSurface>;
  let replicaRedis: ReturnType<typeof createRedis>;
  let replicaSub: ReturnType<typeof createRedis>;

  const startRedis = async () => {
    proc = (await startRedisServer(['--dir', dir, '--dbfilename', 'dump.rdb'], port)).proc;
  };
  const redisCli = (...args: string[]) =>
    Bun.spawn(['redis-cli', '-p', String(port), ...args], { stdout: 'pipe' }).exited;
  async function until(what: string, ok: () => boolean) {
    for (let i = 0; i < 200 && !ok(); i++) await Bun.sleep(50);
    if (!ok()) throw new Error(`timed out waiting for ${what}`);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'studio-redis-'));
    port = await freePort();
    await startRedis();
    const url = `redis://127.0.0.1:${port}`;
    s = await startStack({ gatewayRedisUrl: url });
    // a second replica on the same Redis and Postgres
    replicaRedis = createRedis(url, 'replica redis');
    replicaSub = replicaRedis.duplicate();
    replicaSub.on('error', () => {});
    await Promise.all([connectRedis(replicaRedis), connectRedis(replicaSub)]);
    replica = createGateway({ config: s.config, sql: s.sql, redis: replicaRedis, subscriber: replicaSub });
    await replica.start();
    replicaServer = serveSurface(replica.management);
  });
  afterAll(async () => {
    replicaServer?.stop(true);
    await replica?.stop();
    await Promise.all([quitRedis(replicaSub), quitRedis(replicaRedis)]);
    proc?.kill('SIGKILL');
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a key revoked while Redis was down is refused by every replica after Redis returns with its old data', async () => {
    const st = await s.studio();
    const { key, id } = await s.key(st.id, 'secret', ['instructors:read']);
    const viaReplica = () =>
      fetch(`http://127.0.0.1:${replicaServer.port}/v1/instructors`, { headers: { authorization: `Bearer ${key}` } });
    expect((await s.mg('/v1/instructors', key)).status).toBe(200);
    expect((await viaReplica()).status).toBe(200);
    const [row] = await s.sql<{ hash: string }[]>`select hash from api_keys where id = ${id}`;
    const recordKey = redisNames(s.config.REDIS_PREFIX).record(row!.hash);
    for (let i = 0; i < 100 && !(await replicaRedis.get(recordKey)); i++) await Bun.sleep(20); // shared in the background
    expect(await replicaRedis.get(recordKey)).toContain('"revoked":false');

    expect(await redisCli('SAVE')).toBe(0); // the dump holds the live record
    proc.kill('SIGKILL');
    await proc.exited;
    await until('both replicas to notice Redis is gone', () => !s.gateway.keys.useLocal && !replica.keys.useLocal);

    // revoked while Redis is down: only Postgres hears of it
    await s.sql`update api_keys set revoked_at = now() where id = ${id}`;
    await expectProblem(await s.mg('/v1/instructors', key), 401, 'api_key_revoked');

    await startRedis(); // back, from its dump, with the live record
    await until('both replicas to reconnect', () => s.gateway.keys.useLocal && replica.keys.useLocal);
    for (let i = 0; i < 20; i++) {
      await expectProblem(await s.mg('/v1/instructors', key), 401, 'api_key_revoked');
      await expectProblem(await viaReplica(), 401, 'api_key_revoked');
    }
  }, 30_000);
});
