import { createApiKey, createEndpoint, deleteEndpoint, type WebhookContext, webhookContext } from '@studio/control';
/**
 * The `events` case (`bun run bench events`, issue 21): what events and webhooks cost, on a stack started as in
 * production (gateway, storefront-service and management-service as separate processes on CPU
 * `BENCH_SERVER_CPU`, default 0; the dispatcher runs inside management-service, as `bun run start`
 * runs it). This process (the load and the receivers) moves itself to `BENCH_LOAD_CPU` (default 1).
 *
 * 1. The write: `managementCreateInstructor` through the gateway, one at a time at a fixed pace
 *    (20 a second), into a studio with no endpoint and into one with 16 endpoints subscribed to every
 *    type, in `BENCH_ROUNDS` (3) alternating rounds of 150 writes each (each 16-endpoint round's
 *    deliveries drain before the next round). p50/p99 of each; fan-out happens outside the write,
 *    so the target is within 10 %.
 * 2. Throughput: 2,500 events recorded in one transaction as the outbox records them, delivered to
 *    four endpoints on four local receivers answering 200 at once; deliveries a second from the
 *    commit to the last one received.
 * 3. Delay: 200 writes, one every 50 ms, each delivered to one endpoint; the median time from the
 *    write's 201 (its commit is just before) to the delivery's arrival.
 * The targets are the table's (cases.ts). `--quick`: a smoke run of a few seconds (small counts).
 *
 * Before them, the database is given a deployment's history, `HISTORY` finished deliveries of another studio with an
 * attempt each, and analyzed: on a fresh database whose tables Postgres has no statistics of yet, the services' cached
 * plans are an empty table's (a sequential scan for each batch of successes recorded), and the dispatcher delivered
 * about 40 % of what it does once autovacuum has analyzed them (docs/design/webhooks.md).
 *
 * The feed and the fan-out serve an event once every transaction that could commit before it has
 * ended (`pg_snapshot_xmin`, the whole server's): a long transaction anywhere on the Postgres server
 * (a test run's CREATE or DROP DATABASE, a pg_dump) holds deliveries back. Run it on a quiet server.
 */
import { newId } from '@studio/shared';
import { createSql, type Sql } from '@studio/shared/io';
import { createStudio } from '../lib/studios';
import { formatTarget, target } from './cases';
import { caseFlags, caseOptions, report } from './report';
import { createBenchStack } from './stack';
import { quantile } from './stats';

const QUICK = caseFlags.quick;
const { ROUNDS, SERVER_CPU, LOAD_CPU } = caseOptions({ seconds: 0, rounds: 3 });
const [WRITE_RATE, WRITES, EVENTS, DELAYS, HISTORY] = QUICK
  ? [40, 20, 250, 20, 10_000]
  : [20, 150, 2_500, 200, 100_000];
const ENDPOINTS = 16;
const RECEIVERS = 4;
const [TARGET_WRITE_RATIO, TARGET_THROUGHPUT, TARGET_DELAY] = [
  target('events', 'writeP50'),
  target('events', 'throughput'),
  target('events', 'delayP50'),
];

if (!Bun.which('taskset')) {
  console.error('error: taskset is not installed (util-linux)');
  process.exit(1);
}
// the load and the receivers on the other core than the servers
Bun.spawnSync(['taskset', '-p', '-c', LOAD_CPU, String(process.pid)], { stdout: 'ignore' });

const ms = (x: number) => `${x.toFixed(2)} ms`;

/** Four receivers answering 200 at once; every arrival is counted, with its time, by webhook-id. */
function startReceivers() {
  const arrivals = new Map<string, number>();
  let count = 0;
  const servers = Array.from({ length: RECEIVERS }, () =>
    Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        await req.arrayBuffer();
        count++;
        const id = req.headers.get('webhook-id');
        if (id && !arrivals.has(id)) arrivals.set(id, performance.now());
        return new Response('ok');
      },
    }),
  );
  return {
    urls: servers.map((s) => `http://127.0.0.1:${s.port}/hooks`),
    arrivals,
    count: () => count,
    stop: () => {
      for (const s of servers) s.stop(true);
    },
  };
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(5);
  }
}

/**
 * A deployment's history: `HISTORY` deliveries of a studio of their own, delivered one every 20 s back from a day ago
 * (within the 30 days' retention), an attempt each, and the database analyzed, as autovacuum would have it.
 */
async function seedHistory(sql: Sql, ctx: WebhookContext, url: string) {
  const studio = (await createStudio(sql, { name: 'Bench: history' })).studio.id as string;
  const { endpoint } = await createEndpoint(ctx, { studioId: studio, url });
  await sql`
    insert into webhook_deliveries (studio_id, id, endpoint_id, event_id, event_type, status, attempts, round_attempts,
      next_attempt_at, created_at, updated_at)
    select ${studio}, 'whd_history' || g, ${endpoint.id}, 'evt_history' || g, 'instructor.created', 'succeeded', 1, 1,
      null, t, t
    from generate_series(1, ${HISTORY}::int) g, lateral (select now() - interval '1 day' - g * interval '20 seconds' as t) x`;
  await sql`
    insert into webhook_attempts (studio_id, delivery_id, at, status_code, duration_ms, response)
    select studio_id, id, updated_at, 200, 3, 'ok' from webhook_deliveries where studio_id = ${studio}`;
  await sql`analyze`;
}

/** No delivery pending anywhere: the dispatcher is idle. */
const drained = async (sql: Sql) =>
  (await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where status = 'pending'`)[0]!.n === 0;

const stack = await createBenchStack(SERVER_CPU, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const receivers = startReceivers();
const sql = createSql(stack.config.DATABASE_URL, { max: 4 });
const figures: Record<string, number> = {};
try {
  await stack.start();
  const ctx = webhookContext(sql, stack.config);
  console.log(
    `events: database ${stack.dbName}, servers on CPU ${SERVER_CPU}, load and receivers on CPU ${LOAD_CPU}${QUICK ? ' (quick smoke run)' : ''}`,
  );
  await seedHistory(sql, ctx, receivers.urls[0]!);
  console.log(`history: ${HISTORY.toLocaleString('en')} delivered webhooks of another studio, the database analyzed`);

  // 1. the write's cost with 0 and with 16 endpoints
  const plain = (await createStudio(sql, { name: 'Bench: no endpoint' })).studio.id as string;
  const subscribed = (await createStudio(sql, { name: 'Bench: 16 endpoints' })).studio.id as string;
  const keyOf = async (studioId: string) =>
    (
      await createApiKey(sql, {
        studioId,
        kind: 'secret',
        name: 'bench',
        scopes: ['instructors:write', 'instructors:read'],
      })
    ).key;
  const keys = { plain: await keyOf(plain), subscribed: await keyOf(subscribed) };
  const endpoints: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    endpoints.push(
      (await createEndpoint(ctx, { studioId: subscribed, url: `${receivers.urls[i % RECEIVERS]}/${i}` })).endpoint.id,
    );
  }
  let n = 0;
  async function write(key: string): Promise<{ ms: number; at: number }> {
    const t = performance.now();
    const res = await fetch(`${stack.config.MANAGEMENT_PUBLIC_URL}/v1/instructors`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': crypto.randomUUID(),
      },
      body: JSON.stringify({ name: `Instructor ${++n}`, disciplines: ['yoga'] }),
    });
    const at = performance.now();
    if (res.status !== 201) throw new Error(`create instructor: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    return { ms: at - t, at };
  }
  /** `count` writes, one every 1/rate s (a slow one delays the next, never overlaps it). */
  async function paced(key: string, count: number): Promise<number[]> {
    const times: number[] = [];
    const gap = 1000 / WRITE_RATE;
    let next = performance.now();
    for (let i = 0; i < count; i++) {
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      next += gap;
      times.push((await write(key)).ms);
    }
    return times;
  }
  /** Every delivery of the subscribed studio's writes so far has arrived and is recorded: the dispatcher is idle again. */
  let expected = receivers.count();
  const settle = async () => {
    await until(() => receivers.count() >= expected, 120_000, `${expected} deliveries`);
    await until(() => drained(sql), 60_000, 'the deliveries recorded');
  };
  for (let i = 0; i < 20; i++) {
    // warm-up: connections, key caches, JIT
    await write(i % 2 ? keys.plain : keys.subscribed);
    if (!(i % 2)) expected += ENDPOINTS;
  }
  await settle();
  const times = { plain: [] as number[], subscribed: [] as number[] };
  const before = receivers.count();
  for (let r = 0; r < ROUNDS; r++) {
    // alternate which goes first: the VM's speed drifts
    for (const which of (r % 2 ? ['subscribed', 'plain'] : ['plain', 'subscribed']) as ('plain' | 'subscribed')[]) {
      times[which].push(...(await paced(keys[which], WRITES)));
      if (which === 'subscribed') expected += WRITES * ENDPOINTS;
      // the next round starts with no delivery in flight
      await settle();
    }
  }
  const delivered = receivers.count() - before;
  const row = (label: string, xs: number[]) =>
    `${label.padEnd(16)} ${String(xs.length).padStart(7)} ${ms(quantile(xs, 0.5)).padStart(10)} ${ms(quantile(xs, 0.99)).padStart(10)}`;
  console.log(
    `\n1. managementCreateInstructor through the gateway, ${WRITE_RATE} writes/s, ${ROUNDS} alternating rounds of ${WRITES}`,
  );
  console.log(`${'endpoints'.padEnd(16)} ${'writes'.padStart(7)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}`);
  console.log(row('none', times.plain));
  console.log(row(`${ENDPOINTS} subscribed`, times.subscribed));
  const p50Ratio = quantile(times.subscribed, 0.5) / quantile(times.plain, 0.5);
  const p99Ratio = quantile(times.subscribed, 0.99) / quantile(times.plain, 0.99);
  console.log(
    `16 / none: p50 ${p50Ratio.toFixed(3)}x, p99 ${p99Ratio.toFixed(3)}x (target ${formatTarget(TARGET_WRITE_RATIO)}); ${delivered} deliveries made meanwhile (expected ${times.subscribed.length * ENDPOINTS})`,
  );
  Object.assign(figures, {
    writeP50: p50Ratio,
    'write p50 ms, no endpoint': quantile(times.plain, 0.5),
    'write p99 ms, no endpoint': quantile(times.plain, 0.99),
  });
  for (const id of endpoints) await deleteEndpoint(sql, id);

  // 2. throughput: EVENTS events at once, each to four endpoints on four receivers
  const burst = (await createStudio(sql, { name: 'Bench: throughput' })).studio.id as string;
  for (const url of receivers.urls) await createEndpoint(ctx, { studioId: burst, url });
  const ids = Array.from({ length: EVENTS }, () => newId('event'));
  const rows = ids.map((id, i) => ({
    studioId: burst,
    id,
    type: 'instructor.created',
    resource: 'instructor',
    requestId: 'req_bench',
    traceId: null,
    data: sql.json({
      object: {
        id: `ins_bench${i}`,
        name: `Instructor ${i}`,
        email: null,
        bio: null,
        photoUrl: null,
        disciplines: ['yoga'],
        active: true,
      },
    } as never),
  }));
  const startCount = receivers.count();
  await sql.begin(async (tx) => {
    // as the outbox records them: in the writing transaction, with the notification delivered at commit
    for (let i = 0; i < rows.length; i += 1_000) await tx`insert into events ${tx(rows.slice(i, i + 1_000) as never)}`;
    await tx`select pg_notify('studio_events', '')`;
  });
  const committed = performance.now();
  const total = EVENTS * RECEIVERS;
  await until(() => receivers.count() - startCount >= total, 300_000, `${total} deliveries`);
  const seconds = (performance.now() - committed) / 1000;
  await until(() => drained(sql), 120_000, 'the deliveries recorded');
  const recordedSeconds = (performance.now() - committed) / 1000;
  const rate = total / seconds;
  console.log(
    `\n2. Dispatcher throughput: ${EVENTS} events committed at once, ${RECEIVERS} endpoints on ${RECEIVERS} local receivers answering 200`,
  );
  console.log(
    `${total} deliveries received in ${seconds.toFixed(2)} s: ${rate.toFixed(0)} deliveries/s (target ${formatTarget(TARGET_THROUGHPUT)}); all recorded as delivered after ${recordedSeconds.toFixed(2)} s`,
  );
  figures.throughput = rate;

  // 3. delay: from a write's answer (its commit) to the delivery's arrival
  const single = (
    await createEndpoint(ctx, { studioId: plain, url: receivers.urls[0]!, events: ['instructor.created'] })
  ).endpoint.id;
  const delays: number[] = [];
  for (let i = 0; i < DELAYS; i++) {
    const { at } = await write(keys.plain);
    const [event] = await sql<
      { id: string }[]
    >`select id from events where studio_id = ${plain} order by xid desc, seq desc limit 1`;
    await until(() => receivers.arrivals.has(event!.id), 30_000, 'a delivery');
    delays.push(receivers.arrivals.get(event!.id)! - at);
    await Bun.sleep(50);
  }
  await deleteEndpoint(sql, single);
  const median = quantile(delays, 0.5);
  console.log(`\n3. Delay from commit to delivery: ${DELAYS} writes, one every 50 ms or more, one endpoint`);
  console.log(
    `p50 ${ms(median)} (target ${formatTarget(TARGET_DELAY)}), p90 ${ms(quantile(delays, 0.9))}, p99 ${ms(quantile(delays, 0.99))}, max ${ms(Math.max(...delays))}`,
  );
  Object.assign(figures, { delayP50: median, 'delay p99 ms': quantile(delays, 0.99) });
  report(figures);
} finally {
  receivers.stop();
  await sql.end({ timeout: 2 });
  await stack.stop();
}
