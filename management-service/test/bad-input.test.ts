/** Bad input gets a clear problem: messages a developer can act on, nesting bounded before parsing, 413 with a body. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { classBody, instructor, studioWithKey } from './fixtures';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

const errorsOf = async (res: Response) =>
  (await expectProblem(res, 422, 'validation_failed')).errors as { path: string; message: string }[];

describe('validation messages name the allowed values, the format or the bound', () => {
  test('enums list their values; patterns, lengths, ranges, unknown and missing fields say what is wrong', async () => {
    const { studio, write } = await studioWithKey(s);
    const ana = await instructor(s, studio.id);
    const errors = await errorsOf(
      await write('POST', '/v1/classes', {
        ...classBody(ana),
        mode: 'hologram',
        title: '',
        durationMinutes: 2,
        colour: 'red',
        level: 'expert',
        capacity: null,
      }),
    );
    const at = (path: string) => errors.find((e) => e.path === path)?.message;
    expect(at('/body/mode')).toBe('must be one of: broadcast, two_way, community, coaching');
    expect(at('/body/level')).toBe('must be one of: all_levels, beginner, intermediate, advanced');
    expect(at('/body/title')).toBe('must not be empty');
    expect(at('/body/durationMinutes')).toBe('must be at least 5');
    expect(at('/body/colour')).toBe('is not a field of this object');
    expect(at('/body/capacity')).toBe('must be an integer');
    const missing = await errorsOf(await write('POST', '/v1/classes', { title: 'x' }));
    expect(missing.find((e) => e.path === '/body/mode')?.message).toBe('is required');
    const code = await errorsOf(
      await write('POST', '/v1/coupons', { code: 'a b', config: { kind: 'percent', percentOff: 5 } }),
    );
    expect(code[0]!.message).toStartWith('is not in the expected format');
    expect(code[0]!.message).not.toContain('^');
  });
});

describe('what a bad body costs is bounded', () => {
  test('a 1 MiB array of wrong items is judged by its first thousand errors, not its half million', async () => {
    const { studio, write } = await studioWithKey(s);
    const ana = await instructor(s, studio.id);
    const planIds = `[${Array(500_000).fill('0').join(',')}]`; // 1 MB of numbers where ids go, past maxItems
    const body = `${JSON.stringify(classBody(ana)).slice(0, -1)},"planIds":${planIds}}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const errors = await errorsOf(await write('POST', '/v1/classes', body));
    expect(errors).toHaveLength(21);
    expect(errors[20]!.message).toStartWith('and at least 980 more errors not listed');
  });
});

describe('nesting is bounded before parsing', () => {
  test('30,000 nested [ (60 KB) is 400 malformed_json at once, and another studio is not kept waiting', async () => {
    const { write } = await studioWithKey(s);
    const other = await studioWithKey(s);
    const deep = '['.repeat(30_000) + ']'.repeat(30_000);
    const started = performance.now();
    const [res, neighbour] = await Promise.all([write('POST', '/v1/instructors', deep), other.get('/v1/instructors')]);
    const body = await expectProblem(res, 400, 'malformed_json');
    expect(String(body.detail)).toContain('32');
    expect(neighbour.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(500);
  });
  test('33 levels are refused, 32 reach the validator; brackets inside strings do not count', async () => {
    const { write } = await studioWithKey(s);
    const nest = (n: number) => `${'{"a":'.repeat(n - 1)}{}${'}'.repeat(n - 1)}`;
    await expectProblem(await write('POST', '/v1/instructors', nest(33)), 400, 'malformed_json');
    await expectProblem(await write('POST', '/v1/instructors', nest(32)), 422, 'validation_failed');
    const res = await write(
      'POST',
      '/v1/instructors',
      JSON.stringify({ name: `${'['.repeat(50)} Ana ${'{'.repeat(50)}` }),
    );
    expect(res.status).toBe(201);
  });
  test('an empty or broken JSON body is 400 malformed_json', async () => {
    const { write } = await studioWithKey(s);
    await expectProblem(await write('POST', '/v1/instructors', '{"name": '), 400, 'malformed_json');
    await expectProblem(await write('POST', '/v1/instructors', ''), 400, 'malformed_json');
  });
  test('bytes that are not UTF-8 are 400 malformed_json, never stored with U+FFFD in their place', async () => {
    const { studio, key } = await studioWithKey(s);
    for (const bad of [
      [0xff, 0xfe],
      [0xc0, 0x80],
    ]) {
      const bytes = new Uint8Array([...Buffer.from('{"name":"'), ...bad, ...Buffer.from(' Ana"}')]);
      const res = await s.mg('/v1/instructors', key, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: bytes,
      });
      const body = await expectProblem(res, 400, 'malformed_json');
      expect(body.detail).toContain('not UTF-8');
    }
    expect(await s.sql`select 1 from instructors where studio_id = ${studio.id}`).toHaveLength(0);
  });
  test('an unpaired surrogate escape is 400 malformed_json, in a text or a JSON column; a pair (an emoji) is text', async () => {
    const { studio, write } = await studioWithKey(s);
    for (const [path, body] of [
      ['/v1/instructors', '{"name":"Ana\\ud800"}'],
      ['/v1/instructors', '{"name":"Ana\\udc00x"}'],
      ['/v1/locations', '{"name":"Studio","address":{"line1":"\\ud800"}}'],
      ['/v1/instructors', '{"name":"Ana","\\ud800":1}'],
    ] as const) {
      const refused = await expectProblem(await write('POST', path, body), 400, 'malformed_json');
      expect(refused.detail).toContain('unpaired surrogate');
    }
    expect(await s.sql`select 1 from instructors where studio_id = ${studio.id}`).toHaveLength(0);
    const emoji = await write('POST', '/v1/instructors', '{"name":"Ana \\ud83e\\uddd8"}');
    expect(emoji.status).toBe(201);
    expect((await emoji.json()).name).toBe('Ana 🧘');
  });
});

describe('413 payload_too_large carries a problem body, whichever process answers', () => {
  const big = () => JSON.stringify({ name: 'x', bio: 'y'.repeat(1024 * 1024) });
  test('a declared length over 1 MiB, at the gateway', async () => {
    const { write } = await studioWithKey(s);
    await expectProblem(await write('POST', '/v1/instructors', big()), 413, 'payload_too_large');
  });
  test('a chunked body that grows past 1 MiB, at the gateway', async () => {
    const { key } = await studioWithKey(s);
    const chunk = new TextEncoder().encode('y'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"x","bio":"'));
        if (sent > 1.5 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const res = await s.mg('/v1/instructors', key, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    } as RequestInit);
    await expectProblem(res, 413, 'payload_too_large');
  });
  test('the service itself, for a body the gateway did not read first (direct, signed)', async () => {
    const { signedHeaders } = await import('@studio/shared');
    const studio = await s.studio();
    const caller = {
      studioId: studio.id,
      keyId: 'key_x',
      scopes: ['instructors:write'],
      operationId: 'managementCreateInstructor',
      requestId: 'req_direct',
    };
    // the body is refused for its size before its hash is compared, so only the key is signed here
    const headers = {
      ...signedHeaders(s.config.GATEWAY_SECRET, 'POST', '/v1/instructors', caller, Date.now(), {
        idempotencyKey: 'k1',
      }),
      'content-type': 'application/json',
      'idempotency-key': 'k1',
    };
    const res = await fetch(`${s.managementServiceUrl}/v1/instructors`, { method: 'POST', headers, body: big() });
    await expectProblem(res, 413, 'payload_too_large');
  });
});
