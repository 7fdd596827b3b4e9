import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { operationsOf } from '@studio/shared';
import { type Stack, startStack } from '../../test/harness';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

const MINE = [
  'managementListClasses',
  'managementCreateClass',
  'managementUpdateClass',
  'managementCancelClass',
  'managementListMembers',
  'managementInviteMember',
  'managementUpdateMember',
  'managementCancelMembership',
  'managementListSchedule',
  'managementRescheduleOccurrence',
];

describe('Management OpenAPI document', () => {
  test('/openapi.json (no key) is OpenAPI 3.1 with SecretKeyAuth, and each operation its scope and problems', async () => {
    const res = await fetch(`${s.managementUrl}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    const response = (r: Record<string, any>) => (r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r);
    expect(doc.openapi).toStartWith('3.1');
    expect(doc.components.securitySchemes.SecretKeyAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ops = new Map<string, { method: string; path: string; op: Record<string, any> }>();
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<Record<string, any>>(item))
        if (op?.operationId) ops.set(op.operationId, { method, path, op });
    }
    for (const o of operationsOf('management').filter((x) => MINE.includes(x.id))) {
      const found = ops.get(o.id);
      expect(found).toBeDefined();
      expect(found!.path).toBe(o.path);
      expect(found!.method.toUpperCase()).toBe(o.method);
      expect(found!.op['x-required-scope']).toBe(o.scope);
      expect(found!.op.description).toContain(o.scope);
      expect(found!.op.security).toEqual([{ SecretKeyAuth: [] }]);
      for (const status of ['401', '403', '429']) expect(found!.op.responses[status]).toBeDefined();
      if (o.method !== 'GET') {
        expect(response(found!.op.responses['400']).description).toContain('idempotency_key_required');
        expect(response(found!.op.responses['409']).description).toContain('idempotency_key_reused');
        expect(
          found!.op.parameters.some(
            (p: { name: string; in: string }) => p.name.toLowerCase() === 'idempotency-key' && p.in === 'header',
          ),
        ).toBe(true);
      }
      if (o.paginated) expect(response(found!.op.responses['400']).description).toContain('invalid_cursor');
    }
    expect(response(ops.get('managementCreateClass')!.op.responses['409']).description).toContain(
      'instructor_double_booked',
    );
    expect(response(ops.get('managementCreateClass')!.op.responses['422']).description).toContain(
      'unsupported_channel',
    );
    expect(response(ops.get('managementUpdateMember')!.op.responses['409']).description).toContain('last_admin');
    expect(response(ops.get('managementRescheduleOccurrence')!.op.responses['409']).description).toContain(
      'occurrence_cancelled',
    );
    expect(Object.keys(doc.paths)).not.toContain('/healthz');
  });

  test('/docs is an HTML page', async () => {
    const res = await fetch(`${s.managementUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
  });
});
