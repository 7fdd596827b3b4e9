/** What the webhook tests share: a database of their own, a real receiver (Bun.serve) and events written as the outbox writes them. */

import { type Config, loadConfig, newId, randomBase62 } from '@studio/shared';
import { createSql, type Sql } from '@studio/shared/io';
import postgres from 'postgres';
import { createStudio } from '../../scripts/lib/studios';

/**
 * A database cloned from the migrated template (as the harness makes one) and a configuration for
 * it: enough for the dispatcher, which needs no gateway or service (the end-to-end test uses the
 * whole stack).
 */
export async function freshDatabase(env: Record<string, string> = {}) {
  const baseUrl = process.env.TEST_DATABASE_URL!;
  const databaseName = `studio_t_${randomBase62(10).toLowerCase()}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${databaseName} template ${process.env.TEST_TEMPLATE_DB}`);
  await admin.end();
  const url = Object.assign(new URL(baseUrl), { pathname: `/${databaseName}` }).href;
  const config: Config = loadConfig({ DATABASE_URL: url, REDIS_URL: 'none', ...env });
  const sql = createSql(url, { max: 10 });
  return {
    config,
    sql,
    url,
    async studio() {
      const r = await createStudio(sql, { name: 'Webhook Studio' });
      return { id: r.studio.id as string };
    },
    async close() {
      await sql.end({ timeout: 2 });
      const a = postgres(baseUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${databaseName} with (force)`);
      await a.end();
    },
  };
}
export type TestDatabase = Awaited<ReturnType<typeof freshDatabase>>;

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** How the receiver answers one request: a status (after `delayMs`), or never ('hang'). */
export type Answer = number | { status: number; delayMs?: number; body?: string } | 'hang';

/**
 * A receiver on a free loopback port. `answers` are used in order, then `fallback` (default 200);
 * every request that arrives is kept, in order, whatever the answer.
 */
export function startReceiver(answers: Answer[] = [], fallback: Answer = 200, port = 0) {
  const received: Received[] = [];
  const queue = [...answers];
  const hanging: Array<() => void> = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    idleTimeout: 0,
    async fetch(req) {
      const body = await req.text();
      received.push({ headers: req.headers.toJSON(), body, at: Date.now() });
      const answer = queue.length ? queue.shift()! : fallback;
      if (answer === 'hang') {
        await new Promise<void>((resolve) => hanging.push(resolve));
        return new Response('too late', { status: 200 });
      }
      const a = typeof answer === 'number' ? { status: answer } : answer;
      if (a.delayMs) await Bun.sleep(a.delayMs);
      return new Response(a.body ?? `answer ${a.status}`, { status: a.status });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks`,
    port: server.port,
    received,
    /** Requests carrying this webhook-id. */
    of: (eventId: string) => received.filter((r) => r.headers['webhook-id'] === eventId),
    answer(...more: Answer[]) {
      queue.push(...more);
    },
    stop() {
      for (const release of hanging) release();
      server.stop(true);
    },
  };
}
export type Receiver = ReturnType<typeof startReceiver>;

/** An event as the outbox records it (the write runner's insert, with its notification). */
export async function recordEvent(
  sql: Sql,
  studioId: string,
  type = 'instructor.created',
  object: Record<string, unknown> = { id: 'ins_test', name: 'Ana' },
) {
  const id = newId('event');
  await sql.begin(async (tx) => {
    await tx`
      insert into events (studio_id, id, type, resource, data, request_id, trace_id)
      values (${studioId}, ${id}, ${type}, ${type.split('.')[0]!}, ${tx.json({ object } as never)}, ${'req_test'}, ${'0af7651916cd43dd8448eb211c80319c'})`;
    await tx`select pg_notify('studio_events', '')`;
  });
  return id;
}

/** Polls `check` until it holds (or fails the test after `ms`). */
export async function until(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(20);
  }
}
