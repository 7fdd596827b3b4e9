/**
 * The `memory` case (`bun run bench memory`): the gateway's resident memory (issue 22), idle and under many distinct
 * keys. Starts a gateway and storefront-service as production runs them (default configuration),
 * reads the gateway's RSS from /proc once it is ready and idle, then loads it in cycles: a Storefront
 * read with each of 100,000 (--quick: 2,000) distinct publishable keys of one studio, a second pass over
 * the same keys, and as many unknown keys (well-formed, valid checksum, in no database, new each
 * cycle). Each key leaves a record in the key cache, a rate-limit group, a "last used" stamp and an
 * activity entry; every one of those is capped, so the figure must level off, not grow with keys.
 * That is checked, not assumed: after 6 cycles (--quick: 2), the last must have raised the high-water
 * RSS by at most the table's share (cases.ts) over the cycle before.
 */
import { generateKey, hashKey, keyHint, newId } from '@studio/shared';
import { createSql } from '@studio/shared/io';
import { createStudio } from '../lib/studios';
import { formatTarget, holds, target } from './cases';
import { caseFlags, caseOptions, report } from './report';
import { createBenchStack } from './stack';

const [KEYS, CYCLES] = caseFlags.quick ? [2_000, 2] : [100_000, 6];
const CONCURRENCY = 64;
const IDLE_TARGET = target('memory', 'idleMb');
/** A cycle that raises the high-water RSS by this share or less of the one before: the memory has levelled off. */
const LEVEL_GROWTH = target('memory', 'lastGrowth');

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

const stack = await createBenchStack(caseOptions({ seconds: 0, rounds: 1 }).SERVER_CPU, {
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
  console.log(`gateway RSS idle: ${idle.toFixed(0)} MB (target ${formatTarget(IDLE_TARGET)})`);
  const heapMb = async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${stack.env.OPS_PORT}/metrics`)).text();
    return Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(metrics)?.[1] ?? Number.NaN) / 1048576;
  };
  /** Every read of a pass must have been answered as expected, or its keys never reached the structures measured. */
  let unexpected = false;
  const pass = async (label: string, batch: string[], expected: number) => {
    const t = performance.now();
    const statuses = await readWith(url, batch);
    if (statuses[expected] !== batch.length) unexpected = true;
    const rss = rssMb(pid);
    console.log(
      `  ${label} (${((performance.now() - t) / 1000).toFixed(1)} s): RSS ${rss.toFixed(0)} MB, heap in use ${(await heapMb()).toFixed(0)} MB ${JSON.stringify(statuses)}`,
    );
    return rss;
  };
  const highs: number[] = [];
  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    console.log(`cycle ${cycle}:`);
    const rss = [
      await pass(`${KEYS.toLocaleString('en')} distinct keys`, keys, 200),
      await pass('the same keys again', keys, 200),
      await pass(
        `${KEYS.toLocaleString('en')} unknown keys`,
        Array.from({ length: KEYS }, () => generateKey('publishable')),
        401,
      ),
    ];
    highs.push(Math.max(...rss, highs.at(-1) ?? 0));
    const [before, now] = [highs.at(-2), highs.at(-1)!];
    console.log(
      `  high-water RSS ${now.toFixed(0)} MB${before === undefined ? '' : `, ${(((now - before) / before) * 100).toFixed(1)} % over the cycle before`}`,
    );
  }
  // CYCLES is at least 2: the last cycle always has one before it
  const lastGrowth = (highs.at(-1)! / highs.at(-2)! - 1) * 100;
  const levelled = holds(LEVEL_GROWTH, lastGrowth);
  await Bun.sleep(2_000);
  console.log(
    `gateway RSS 2 s after the last read: ${rssMb(pid).toFixed(0)} MB (heap in use ${(await heapMb()).toFixed(0)} MB: live data and garbage not yet collected; the rest of RSS is freed memory the allocator keeps)`,
  );
  console.log(
    levelled
      ? `levelled off: high-water RSS ${highs.map((h) => h.toFixed(0)).join(', ')} MB after each cycle, the last ≤ ${LEVEL_GROWTH.value} % over the one before: bounded`
      : `still growing: high-water RSS ${highs.map((h) => h.toFixed(0)).join(', ')} MB after each cycle, the last > ${LEVEL_GROWTH.value} % over the one before: not shown bounded`,
  );
  report(
    { idleMb: idle, lastGrowth, 'high-water RSS MB': highs.at(-1)! },
    unexpected ? ['some reads were not answered 200 (known keys) or 401 (unknown keys): the figures do not hold'] : [],
  );
} catch (err) {
  console.error(`bench failed: ${(err as Error).stack ?? err}`);
  failed = true;
} finally {
  await stack.stop();
}
process.exit(failed ? 1 : 0);
