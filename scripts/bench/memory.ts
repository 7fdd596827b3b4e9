#!/usr/bin/env bun
/**
 * `bun run bench:memory`: the gateway's resident memory (issue 22), idle and under many distinct
 * keys. Starts a gateway and storefront-service as production runs them (default configuration),
 * reads the gateway's RSS from /proc once it is ready and idle, then after a Storefront read with
 * each of BENCH_KEYS (100,000) distinct publishable keys of one studio, after a second pass over
 * the same keys, and after as many unknown keys (well-formed, valid checksum, in no database).
 * Each key leaves a record in the key cache, a rate-limit group, a "last used" stamp and an
 * activity entry; every one of those is capped, so the figure must level off, not grow with keys.
 */
import { generateKey, hashKey, keyHint, newId } from '@studio/shared';
import { createSql } from '@studio/shared/io/db';
import { createStudio } from '../lib/studios';
import { createBenchStack } from './stack';

const KEYS = Number(process.env.BENCH_KEYS ?? 100_000);
const CONCURRENCY = 64;
const IDLE_TARGET_MB = 100;

const rssMb = (pid: number): number => {
  const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8') as string;
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
};

/** One Storefront read per key, CONCURRENCY at a time; answers counted by status. */
async function readWith(url: string, keys: string[]): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

const stack = await createBenchStack(process.env.BENCH_SERVER_CPU ?? '0', {
  // a bench from one address: unknown keys would be refused by their per-address limit before any lookup
  RATE_LIMIT_UNKNOWN_KEY: '1000000:1000000',
});
let failed = false;
try {
  const sql = createSql(stack.config.DATABASE_URL, { max: 4 });
  const { studio } = await createStudio(sql, { name: 'Bench memory' });
  const keys = Array.from({ length: KEYS }, () => generateKey('publishable'));
  for (let i = 0; i < keys.length; i += 5_000) {
    const rows = keys.slice(i, i + 5_000).map((key, j) => ({
      id: newId('key'),
      studioId: studio.id,
      kind: 'publishable',
      name: `bench ${i + j}`,
      scopes: [],
      hash: hashKey(key),
      hint: keyHint(key),
    }));
    await sql`insert into api_keys ${sql(rows)}`;
  }
  await sql.end();
  await stack.start(['storefront-service', 'gateway']);
  const pid = stack.pidOf('gateway');
  const url = `${stack.config.STOREFRONT_PUBLIC_URL}/v1/classes`;
  await Bun.sleep(3_000);
  const idle = rssMb(pid);
  console.log(`gateway RSS idle: ${idle.toFixed(0)} MB (target ≤ ${IDLE_TARGET_MB} MB)`);
  const rows: [string, number, Record<number, number>][] = [];
  for (const [label, batch] of [
    [`${KEYS.toLocaleString('en')} distinct keys, first pass`, keys],
    ['the same keys again', keys],
    [`${KEYS.toLocaleString('en')} unknown keys`, Array.from({ length: KEYS }, () => generateKey('publishable'))],
  ] as const) {
    const t = performance.now();
    const statuses = await readWith(url, batch);
    rows.push([`${label} (${((performance.now() - t) / 1000).toFixed(1)} s)`, rssMb(pid), statuses]);
  }
  await Bun.sleep(2_000);
  rows.push(['2 s later', rssMb(pid), {}]);
  const metrics = await (await fetch(`http://127.0.0.1:${stack.env.OPS_PORT}/metrics`)).text();
  const heap = /^nodejs_heap_size_used_bytes (\S+)/m.exec(metrics)?.[1];
  if (heap)
    console.log(
      `gateway heap in use at the end: ${(Number(heap) / 1048576).toFixed(0)} MB (the rest of RSS is freed memory the allocator keeps)`,
    );
  for (const [label, mb, statuses] of rows)
    console.log(
      `gateway RSS after ${label}: ${mb.toFixed(0)} MB ${Object.keys(statuses).length ? JSON.stringify(statuses) : ''}`,
    );
  failed = idle > IDLE_TARGET_MB;
  console.log(failed ? 'RESULT: below target' : 'RESULT: meets target');
} catch (err) {
  console.error(`bench failed: ${(err as Error).stack ?? err}`);
  failed = true;
} finally {
  await stack.stop();
}
process.exit(failed ? 1 : 0);
