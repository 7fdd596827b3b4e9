import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Caller, signedHeaders } from '@studio/shared';
import { connectRedis, createRedis, deleteByPrefix } from '@studio/shared/io';
import { startRedisServer } from '../../scripts/lib/throwaway-redis';
import { expectProblem, inMode, MODES, type Stack, startStack } from '../../test/harness';
import { inEachMode, needs } from '../../test/needs';
import { createManagementService } from '../src/app';
import { redisLocks } from '../src/kit/idempotency';
import { writeHooks } from '../src/kit/write';
import { classBody, instructor, studioWithKey } from './fixtures';

let s: Stack; // the stack of the mode running now (each describe below starts its own)

const countClasses = async (studioId: string) =>
  Number((await s.sql`select count(*)::int as n from classes where studio_id = ${studioId}`)[0]!.n);

// with Redis (lock and hot copy there), and in single-node mode (Postgres advisory locks alone, docs/design/single-node.md)
for (const mode of MODES)
  inEachMode(mode).describe(`Idempotency-Key (docs/design/idempotency.md), ${mode}`, () => {
    beforeAll(async () => (s = await startStack(inMode(mode))));
    afterAll(() => s.close());

    test('missing header: 400 idempotency_key_required, before body validation', async () => {
      const { write } = await studioWithKey(s);
      await expectProblem(
        await write('POST', '/v1/classes', { nonsense: true }, null),
        400,
        'idempotency_key_required',
      );
      await expectProblem(
        await write('DELETE', '/v1/classes/cls_nope', undefined, null),
        400,
        'idempotency_key_required',
      );
    });

    test('empty or over 255 characters: 400 idempotency_key_invalid', async () => {
      const { write } = await studioWithKey(s);
      await expectProblem(
        await write('POST', '/v1/members/invites', { email: 'a@b.test' }, ''),
        400,
        'idempotency_key_invalid',
      );
      await expectProblem(
        await write('POST', '/v1/members/invites', { email: 'a@b.test' }, 'k'.repeat(256)),
        400,
        'idempotency_key_invalid',
      );
      expect((await write('POST', '/v1/members/invites', { email: 'a@b.test' }, 'k'.repeat(255))).status).toBe(201);
    });

    test('a body that is not application/json: 415 unsupported_media_type', async () => {
      const { write } = await studioWithKey(s);
      await expectProblem(
        await write('POST', '/v1/members/invites', 'email=a@b.test', 'k1', {
          'content-type': 'application/x-www-form-urlencoded',
        }),
        415,
        'unsupported_media_type',
      );
    });

    test.if(mode === 'redis')(
      "the response's copy in Redis expires before its record in Postgres: no replay the database would not give",
      async () => {
        const { studio, write } = await studioWithKey(s);
        // the record's clock starts inside the transaction, the copy's after the commit: the copy must still go first
        expect((await write('POST', '/v1/instructors', { name: 'Noor' }, 'ttl-key')).status).toBe(201);
        const id = new Bun.CryptoHasher('sha256').update(`${studio.id}\nttl-key`).digest('hex').slice(0, 40);
        const copyMs = await s.redis.pTTL(`${s.config.REDIS_PREFIX}idem:rec:${id}`);
        const [row] = await s.sql<{ ms: number }[]>`
          select (extract(epoch from expires_at - clock_timestamp()) * 1000)::float8 as ms
          from idempotency_records where studio_id = ${studio.id} and key = 'ttl-key'`;
        expect(copyMs).toBeGreaterThan(0);
        expect(copyMs).toBeLessThan(row!.ms);
      },
    );

    test('a retry replays the stored response byte for byte, key order and whitespace ignored', async () => {
      const { studio, write } = await studioWithKey(s);
      const ins = await instructor(s, studio.id);
      const body = classBody(ins);
      const first = await write('POST', '/v1/classes', body, 'same-key');
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const firstText = await first.text();
      const reordered = JSON.stringify(Object.fromEntries(Object.entries(body).reverse()), null, 2);
      const again = await write('POST', '/v1/classes', reordered, 'same-key');
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      expect(await again.text()).toBe(firstText);
      expect(await countClasses(studio.id)).toBe(1);
    });

    test('same key, other body or path: 409 idempotency_key_reused', async () => {
      const { studio, write } = await studioWithKey(s);
      const ins = await instructor(s, studio.id);
      expect((await write('POST', '/v1/classes', classBody(ins), 'k')).status).toBe(201);
      await expectProblem(
        await write('POST', '/v1/classes', classBody(ins, { title: 'Other' }), 'k'),
        409,
        'idempotency_key_reused',
      );
      await expectProblem(
        await write('POST', '/v1/members/invites', { email: 'x@y.test' }, 'k'),
        409,
        'idempotency_key_reused',
      );
      expect(await countClasses(studio.id)).toBe(1);
    });

    test('keys are scoped per studio', async () => {
      const a = await studioWithKey(s);
      const b = await studioWithKey(s);
      expect((await a.write('POST', '/v1/members/invites', { email: 'p@q.test' }, 'shared')).status).toBe(201);
      const res = await b.write('POST', '/v1/members/invites', { email: 'p@q.test' }, 'shared');
      expect(res.status).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
    });

    test('business errors are stored and replayed; the retry does not act', async () => {
      const { studio, write } = await studioWithKey(s);
      const ins = await instructor(s, studio.id);
      const first = await write('POST', '/v1/classes', classBody('ins_unknown'), 'e1');
      const text = await first.text();
      expect(first.status).toBe(422);
      // even once the instructor exists, the retry is the stored 422
      const retry = await write('POST', '/v1/classes', classBody('ins_unknown'), 'e1');
      expect(retry.status).toBe(422);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(await retry.text()).toBe(text);
      void ins;
    });

    test("a request refused before it runs (422 by schema, 400 not JSON, 415) is its key's answer: replayed, and another request with the key is 409", async () => {
      const { studio, write } = await studioWithKey(s);
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const refusals = [
        {
          key: 'early-422',
          body: { name: '' } as unknown,
          again: '{ "name" : "" }',
          status: 422,
          code: 'validation_failed',
        },
        { key: 'early-400', body: '{bad', again: '{bad', status: 400, code: 'malformed_json' },
        {
          key: 'early-415',
          body: 'name=Ana',
          again: 'name=Ana',
          status: 415,
          code: 'unsupported_media_type',
          headers: form,
        },
      ];
      for (const r of refusals) {
        const first = await write('POST', '/v1/instructors', r.body, r.key, r.headers);
        const text = await first.text();
        expect([first.status, JSON.parse(text).code]).toEqual([r.status, r.code]);
        expect(first.headers.get('idempotent-replayed')).toBeNull();
        // the same request again (a 422's body in other whitespace): the stored answer
        const retry = await write('POST', '/v1/instructors', r.again, r.key, r.headers);
        expect(retry.status).toBe(r.status);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(await retry.text()).toBe(text);
        // the body mended, with the same key: another request (rule 5), which does not act
        await expectProblem(
          await write('POST', '/v1/instructors', { name: 'Ana Ruiz' }, r.key),
          409,
          'idempotency_key_reused',
        );
      }
      const rows = await s.sql`select count(*)::int as n from instructors where studio_id = ${studio.id}`;
      expect(rows[0]!.n).toBe(0);
      // with a fresh key, the mended body acts
      expect((await write('POST', '/v1/instructors', { name: 'Ana Ruiz' })).status).toBe(201);
    });

    test("a refused request and another with its key at once: one of them is the key's answer, never both", async () => {
      const { write } = await studioWithKey(s);
      const pairs = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          Promise.all([
            write('POST', '/v1/classes', classBody('ins_unknown'), `pair-${i}`), // 422: refused by the action
            write('POST', '/v1/members/invites', { email: `pair${i}@idem.test` }, `pair-${i}`),
          ]),
        ),
      );
      // the refusal stored under the key while the other acted under it too: two first answers for one key
      const both = pairs.filter(([refused, other]) => refused.status === 422 && other.status === 201);
      expect(both).toHaveLength(0);
      // and whichever acted is the key's answer: the other, sent again, is refused as another request
      for (const [i, [refused, other]] of pairs.entries()) {
        if (refused.status === 422) {
          const again = await write('POST', '/v1/members/invites', { email: `pair${i}@idem.test` }, `pair-${i}`);
          await expectProblem(again, 409, 'idempotency_key_reused');
        } else if (other.status === 201) {
          const again = await write('POST', '/v1/classes', classBody('ins_unknown'), `pair-${i}`);
          await expectProblem(again, 409, 'idempotency_key_reused');
        }
      }
    });

    test('10 concurrent requests with one key have one effect', async () => {
      const { studio, write } = await studioWithKey(s);
      const ins = await instructor(s, studio.id);
      const body = classBody(ins);
      const results = await Promise.all(
        Array.from({ length: 10 }, () => write('POST', '/v1/classes', body, 'race-key')),
      );
      const statuses = results.map((r) => r.status);
      for (const r of results) {
        if (r.status === 409) await expectProblem(r, 409, 'idempotency_request_in_progress');
      }
      expect(statuses.every((x) => x === 201 || x === 409)).toBe(true);
      expect(results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true').length).toBe(1);
      for (const r of results.filter((x) => x.status === 409)) expect(r.headers.get('retry-after')).toBe('1');
      expect(await countClasses(studio.id)).toBe(1);
      const after = await write('POST', '/v1/classes', body, 'race-key');
      expect(after.headers.get('idempotent-replayed')).toBe('true');
    });

    test.if(mode === 'single-node')(
      "a request in flight holds the key's Postgres advisory lock: another with the key meanwhile is 409, then it acts once",
      async () => {
        const { studio, write } = await studioWithKey(s);
        const body = { email: `held${Date.now()}@idem.test` };
        await s.sql.begin(async (tx) => {
          // what the write's own transaction takes (`tryKeyLock`), held here as a request in flight would
          await tx`select pg_advisory_xact_lock(hashtextextended(${`idem\n${studio.id}\nheld-key`}, 0))`;
          await expectProblem(
            await write('POST', '/v1/members/invites', body, 'held-key'),
            409,
            'idempotency_request_in_progress',
          );
        });
        const done = await write('POST', '/v1/members/invites', body, 'held-key');
        expect(done.status).toBe(201);
        expect(done.headers.get('idempotent-replayed')).toBeNull();
      },
    );

    test('a process killed right after the commit: the retry replays instead of creating again', async () => {
      const { studio, write } = await studioWithKey(s);
      const ins = await instructor(s, studio.id);
      const body = classBody(ins);
      writeHooks.afterCommit = () => {
        throw new Error('simulated crash between commit and reply');
      };
      let lost: Response;
      try {
        lost = await write('POST', '/v1/classes', body, 'crash-key');
      } finally {
        writeHooks.afterCommit = undefined;
      }
      expect(lost.status).toBe(500); // the reply never carried the result
      expect(await countClasses(studio.id)).toBe(1); // but the action committed
      // the crashed holder never released its Redis lock nor cached the response
      const retry = await write('POST', '/v1/classes', body, 'crash-key');
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      const created = await retry.json();
      expect(created.title).toBe('Morning Flow');
      expect(await countClasses(studio.id)).toBe(1);
    });

    test('the record commits with the action and expires after 24 h', async () => {
      const { studio, write } = await studioWithKey(s);
      expect((await write('POST', '/v1/members/invites', { email: 'r@s.test' }, 'ttl')).status).toBe(201);
      const [rec] =
        await s.sql`select status, extract(epoch from expires_at - created_at)::int as ttl from idempotency_records where studio_id = ${studio.id} and key = 'ttl'`;
      expect(rec!.status).toBe(201);
      expect(rec!.ttl).toBe(86_400);
      // once expired (and out of the hot copy), the key acts afresh
      await s.sql`update idempotency_records set expires_at = now() - interval '1 second' where studio_id = ${studio.id} and key = 'ttl'`;
      if (mode === 'redis') await deleteByPrefix(s.redis, `${s.config.REDIS_PREFIX}idem:`);
      await expectProblem(
        await write('POST', '/v1/members/invites', { email: 'r@s.test' }, 'ttl'),
        409,
        'member_exists',
      );
    });

    test.if(mode === 'redis')('without Redis, Postgres alone keeps one effect per key and replays', async () => {
      const { studio } = await studioWithKey(s);
      const ins = await instructor(s, studio.id);
      const app = createManagementService({ config: s.config, sql: s.sql, redis: null });
      const caller: Caller = {
        studioId: studio.id,
        keyId: 'key_x',
        scopes: [],
        operationId: 'managementCreateClass',
        requestId: 'req_noredis',
      };
      const body = JSON.stringify(classBody(ins));
      const post = () =>
        app.handle(
          new Request('http://localhost/v1/classes', {
            method: 'POST',
            body,
            headers: {
              ...signedHeaders(s.config.GATEWAY_SECRET, 'POST', '/v1/classes', caller, Date.now(), {
                body,
                idempotencyKey: 'no-redis',
              }),
              'content-type': 'application/json',
              'idempotency-key': 'no-redis',
            },
          }),
        );
      const results = await Promise.all(Array.from({ length: 10 }, post));
      for (const r of results) expect([201, 409]).toContain(r.status);
      expect(results.filter((r) => r.status === 201 && !r.headers.get('idempotent-replayed')).length).toBe(1);
      expect(await countClasses(studio.id)).toBe(1);
      const again = await post();
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });
  });

needs('redis-server').test(
  'a Redis that stops answering, its connection up: the hot copy and the lock answer as a Redis that is down, within a second',
  async () => {
    const { proc, url } = await startRedisServer();
    const redis = createRedis(url, 'paused redis');
    try {
      await connectRedis(redis);
      const locks = redisLocks(redis, 'paused:');
      expect(await locks.take('std_a', 'k1', 'token')).toBe('held');
      proc.kill('SIGSTOP');
      const t = performance.now();
      expect(await locks.cached('std_a', 'k2')).toBeNull();
      expect(await locks.take('std_a', 'k2', 'token')).toBe('none'); // taken as away: no second wait
      await locks.release('std_a', 'k1', 'token');
      expect(performance.now() - t).toBeLessThan(1_800);
    } finally {
      proc.kill('SIGCONT');
      redis.destroy();
      proc.kill();
    }
  },
);
