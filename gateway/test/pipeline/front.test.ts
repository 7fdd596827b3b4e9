import { describe, expect, test } from 'bun:test';
import { frontDoor } from '../../src/pipeline/front';
import { ctxOf, profiles } from './helpers';

const p = profiles();
const docsCalls: string[] = [];
const docs = async (surface: string, path: string) => {
  docsCalls.push(`${surface} ${path}`);
  return new Response('docs');
};

describe('front door step', () => {
  test('the root and /v1 lead to /docs; API paths go on to the next steps', () => {
    const front = frontDoor(p.management, docs);
    for (const path of ['/', '/v1', '/v1/']) {
      const res = front(ctxOf(`http://gw${path}`)) as Response;
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('/docs');
    }
    expect(front(ctxOf('http://gw/v1/classes'))).toBeNull();
    expect(front(ctxOf('http://gw/', { method: 'POST' }))).toBeNull();
  });

  test("health, the document and the reference are the docs handler's, for this surface", async () => {
    const front = frontDoor(p.storefront, docs);
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs', '/docs/problems'])
      await front(ctxOf(`http://gw${path}`));
    expect(docsCalls).toEqual([
      'storefront /healthz',
      'storefront /readyz',
      'storefront /openapi.json',
      'storefront /docs',
      'storefront /docs/problems',
    ]);
  });

  test('preflights are answered on the browser surface only', () => {
    const preflight = frontDoor(p.storefront, docs)(ctxOf('http://gw/v1/classes', { method: 'OPTIONS' })) as Response;
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
    expect(frontDoor(p.management, docs)(ctxOf('http://gw/v1/classes', { method: 'OPTIONS' }))).toBeNull();
  });
});
