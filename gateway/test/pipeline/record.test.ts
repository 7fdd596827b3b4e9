import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { recordStep } from '../../src/pipeline/record';
import { routeStep } from '../../src/pipeline/route';
import { refuse } from '../../src/pipeline/context';
import { requestTimeOf } from '@studio/shared';
import { startStack, type Stack } from '../../../test/harness';
import { ctxOf, profiles, record as keyRecord } from './helpers';

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
    const rows = await stack.sql<{ requestId: string; status: number; operationId: string; outcome: string; problemCode: string; traceId: string }[]>`
      select request_id, status, operation_id, outcome, problem_code, trace_id from activity where studio_id = ${studio.id}`;
    expect([...rows]).toEqual([{
      requestId: refused.requestId, status: 403, operationId: 'managementCreateClass', outcome: 'client_error', problemCode: 'scope_required', traceId: refused.trace.traceId,
    }]);
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
