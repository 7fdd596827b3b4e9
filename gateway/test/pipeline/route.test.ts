import { expect, test } from 'bun:test';
import { routeStep } from '../../src/pipeline/route';
import { ctxOf, profiles } from './helpers';

const p = profiles();

test('route step: the operation of the table, the allowed methods of a known path, or nothing', () => {
  const route = routeStep(p.management);
  const c = ctxOf('http://gw/v1/classes/cls_1?x=1', { method: 'PATCH' });
  route(c);
  expect(c.op?.id).toBe('managementUpdateClass');
  expect(c.pathAndQuery).toBe('/v1/classes/cls_1?x=1');

  const wrongMethod = ctxOf('http://gw/v1/classes', { method: 'PUT' });
  route(wrongMethod);
  expect(wrongMethod.op).toBeNull();
  expect((wrongMethod.route as { allow: string[] }).allow.sort()).toEqual(['GET', 'POST']);

  const unknown = ctxOf('http://gw/v1/nothing');
  route(unknown);
  expect(unknown.route).toBeNull();

  // a Storefront path is not a Management one
  const sf = ctxOf('http://gw/v1/site');
  routeStep(p.storefront)(sf);
  expect(sf.op?.id).toStartWith('storefront');
});
