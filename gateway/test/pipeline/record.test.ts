import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { requestTimeOf } from '@studio/shared';
import { type Stack, startStack } from '../../../test/harness';
import { refuse, trustedProxySet } from '../../src/pipeline/context';
import { recordStep } from '../../src/pipeline/record';
import { routeStep } from '../../src/pipeline/route';
import { ctxOf, record as keyRecord, profiles } from './helpers';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describe('record step', () => {
  test('every answer carries the request id; the browser surface adds CORS; the limit fields once known', () => {
    const p = profiles();
    const c = ctxOf('http://gw/v1/classes');
    const plain = recordStep(p.management, { activity: stack.gateway.activity }).record(c, new Response('x'));
    expect(plain.headers.get('x-request-id')).toBe(c.requestId);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    c.limitHeaders = { ratelimit: '"key";r=9;t=1' };
    const sf = recordStep(p.storefront, { activity: stack.gateway.activity }).record(c, new Response('x'));
    expect(sf.headers.get('access-control-allow-origin')).toBe('*');
    expect(sf.headers.get('ratelimit')).toBe('"key";r=9;t=1');
  });

  test('a call whose key resolved leaves one activity entry, refused or not; a keyless one leaves none', async () => {
    const studio = await stack.studio();
    const p = profiles();
    const { record } = recordStep(p.management, { activity: stack.gateway.activity });
    const refused = ctxOf('http://gw/v1/classes', { method: 'POST' });
    routeStep(p.management)(refused);
    refused.key = keyRecord({ studioId: studio.id, id: 'key_recorded' });
    record(refused, refuse(p.management, refused, 'scope_required'));
    const anonymous = ctxOf('http://gw/v1/classes');
    record(anonymous, refuse(p.management, anonymous, 'api_key_missing'));
    await stack.gateway.activity.flush();
    const rows = await stack.sql<
      {
        requestId: string;
        status: number;
        operationId: string;
        outcome: string;
        problemCode: string;
        traceId: string;
      }[]
    >`
      select request_id, status, operation_id, outcome, problem_code, trace_id from activity where studio_id = ${studio.id}`;
    expect([...rows]).toEqual([
      {
        requestId: refused.requestId,
        status: 403,
        operationId: 'managementCreateClass',
        outcome: 'client_error',
        problemCode: 'scope_required',
        traceId: refused.trace.traceId,
      },
    ]);
  });

  test('an entry keeps the caller: its address (from X-Forwarded-For behind a trusted proxy only), its user agent, and the detail of a refusal, cut at 512 characters', async () => {
    const studio = await stack.studio();
    const p = profiles();
    const { record } = recordStep(p.management, {
      activity: stack.gateway.activity,
      trusted: trustedProxySet('10.0.0.1'),
    });
    const headers = { 'x-forwarded-for': '198.51.100.4, 10.0.0.1', 'user-agent': `Agent/${'x'.repeat(600)}` };
    const viaProxy = ctxOf('http://gw/v1/classes', { headers }, '10.0.0.1');
    const direct = ctxOf('http://gw/v1/classes', { headers }, '203.0.113.9');
    const long = ctxOf(
      'http://gw/v1/classes',
      { headers: { ...headers, 'x-forwarded-for': 'z'.repeat(600) } },
      '10.0.0.1',
    );
    for (const [c, id] of [
      [viaProxy, 'key_proxy'],
      [direct, 'key_direct'],
      [long, 'key_long'],
    ] as const) {
      routeStep(p.management)(c);
      c.key = keyRecord({ studioId: studio.id, id });
      record(c, refuse(p.management, c, 'scope_required', { detail: `Needs classes:write. ${'y'.repeat(600)}` }));
    }
    await stack.gateway.activity.flush();
    const rows = await stack.sql<{ keyId: string; clientAddress: string; userAgent: string; problemDetail: string }[]>`
      select key_id, client_address, user_agent, problem_detail from activity where studio_id = ${studio.id} order by key_id`;
    expect(rows.map((r) => [r.keyId, r.clientAddress])).toEqual([
      ['key_direct', '203.0.113.9'],
      ['key_long', 'z'.repeat(512)],
      ['key_proxy', '198.51.100.4'],
    ]);
    for (const r of rows) {
      expect(r.userAgent).toBe(headers['user-agent'].slice(0, 512));
      expect(r.problemDetail).toStartWith('Needs classes:write. ');
      expect(r.problemDetail).toHaveLength(512);
    }
  });

  test("the entry's time is when the request arrived, the time its request id carries (the dashboard finds it by that)", async () => {
    const studio = await stack.studio();
    const p = profiles();
    const c = ctxOf('http://gw/v1/classes');
    routeStep(p.management)(c);
    c.key = keyRecord({ studioId: studio.id, id: 'key_timed' });
    await Bun.sleep(5);
    recordStep(p.management, { activity: stack.gateway.activity }).record(c, new Response('x'));
    await stack.gateway.activity.flush();
    const [row] = await stack.sql<{ at: Date }[]>`select at from activity where studio_id = ${studio.id}`;
    expect(row!.at.getTime()).toBe(c.at);
    expect(requestTimeOf(c.requestId)).toBe(c.at);
  });
});
