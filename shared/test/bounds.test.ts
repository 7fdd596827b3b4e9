/**
 * Bounded by construction (docs/design/hostile-callers.md): every string of every registry schema has a
 * `maxLength`, every array a `maxItems`, no map is open and no value is of any shape without
 * its documented one; and the OpenAPI documents say so. Also the bounds a problem puts on
 * what it carries of the caller's input.
 */
import { describe, expect, test } from 'bun:test';
import { Type as t } from '@sinclair/typebox';
import {
  boundedErrors,
  MAX_PROBLEM_ERRORS,
  OPERATIONS,
  openApiDocument,
  problemBody,
  problems,
  quote,
  type Surface,
} from '@studio/shared';
import { unbounded } from '../../test/schema-walk';

type Json = Record<string, any>;

describe('the walker', () => {
  test('finds each kind of unbounded place, and passes bounded ones', () => {
    expect(unbounded(t.String())).toEqual(['/: string without maxLength']);
    expect(unbounded(t.Array(t.String({ maxLength: 3 })))).toEqual(['/: array without maxItems']);
    expect(
      unbounded(t.Object({ a: t.Array(t.Object({ b: t.Union([t.String(), t.Null()]) }), { maxItems: 2 }) })),
    ).toEqual(['/a/0/b: string without maxLength']);
    expect(unbounded(t.Record(t.String(), t.Integer()))).toEqual(['/: open map (patternProperties)']);
    expect(unbounded(t.Object({ c: t.Unknown() }))).toEqual(['/c: any value, undocumented']);
    expect(unbounded(t.Object({ c: t.Unknown({ 'x-doc': t.Object({ d: t.String() }) }) }))).toEqual([
      '/c/d: string without maxLength',
    ]);
    expect(unbounded({ $ref: '#/x' }, '', () => ({ type: 'array', items: { type: 'string', enum: ['a'] } }))).toEqual([
      '/: array without maxItems',
    ]);
    expect(
      unbounded(
        t.Object({ a: t.Union([t.Literal('x'), t.Literal('y')]), b: t.String({ maxLength: 5 }), n: t.Integer() }),
      ),
    ).toEqual([]);
  });
});

describe('every schema of the registry is bounded', () => {
  const rows = OPERATIONS.flatMap((o) => [
    ...('query' in o && o.query ? [[`${o.id} query`, o.query] as const] : []),
    ...('body' in o && o.body ? [[`${o.id} body`, o.body] as const] : []),
    [`${o.id} ${o.ok.status}`, o.ok.schema] as const,
  ]);
  test.each(rows)('%s', (_, schema) => {
    expect(unbounded(schema as Json)).toEqual([]);
  });
});

describe.each<Surface>(['storefront', 'management'])('the %s document shows the bounds', (surface) => {
  const doc = openApiDocument(surface, { publicUrl: 'http://127.0.0.1' }) as Json;
  const resolve = (ref: string) => doc.components.schemas[ref.split('/').pop()!];
  const ops = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as const),
  );
  test.each(ops)('%s: path and query parameters, body and success answer', (_, op) => {
    const found: string[] = [];
    // what the registry's schemas declare: path and query parameters (request headers are the gateway's, not a schema's)
    for (const p of op.parameters ?? [])
      if (p.in === 'path' || p.in === 'query') found.push(...unbounded(p.schema, `/${p.in}/${p.name}`, resolve));
    if (op.requestBody) found.push(...unbounded(op.requestBody.content['application/json'].schema, '/body', resolve));
    // a CORS preflight (OPTIONS) answers 204 without a body
    const [, ok] = Object.entries<Json>(op.responses).find(([status]) => status.startsWith('2'))!;
    if (ok.content) found.push(...unbounded(ok.content['application/json'].schema, '/answer', resolve));
    expect(found).toEqual([]);
  });
});

describe('a problem carries a bounded share of what was sent', () => {
  test('a detail quotes at most 100 characters', () => {
    expect(quote('x'.repeat(100))).toBe('x'.repeat(100));
    expect(quote('y'.repeat(100_000))).toBe(`${'y'.repeat(100)}…`);
    const detail = problemBody(
      'not_found',
      'req_1',
      problems.notFound('class', `cls_${'z'.repeat(100_000)}`).options,
    ).detail;
    expect(detail.length).toBeLessThan(200);
  });

  test('errors: at most 20, then one entry saying how many more; each path segment cut to 64 characters', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({
      path: `/body/config/${'k'.repeat(200)}${i}`,
      message: 'is not a field of this object',
    }));
    const kept = boundedErrors(many);
    expect(kept).toHaveLength(MAX_PROBLEM_ERRORS + 1);
    expect(kept.at(-1)).toEqual({
      path: '/body',
      message: 'and 9980 more errors not listed; fix these and send again',
    });
    for (const e of kept) for (const seg of e.path.split('/')) expect(seg.length).toBeLessThanOrEqual(65);
    expect(kept[0]!.path).toBe(`/body/config/${'k'.repeat(64)}…`);
    expect(boundedErrors(many.slice(0, 20))).toHaveLength(20);
  });

  test('invalidFields counts the errors in its detail and never repeats them; the rendered body is small', () => {
    const many = Array.from({ length: 500 }, (_, i) => ({
      path: `/body/classIds/${i}`,
      message: 'is not a class of this studio',
    }));
    const body = problemBody('validation_failed', 'req_1', problems.invalidFields(many).options);
    expect(body.detail).toBe('The request is not valid (500 errors); `errors` names each field and why.');
    expect(body.errors).toHaveLength(MAX_PROBLEM_ERRORS + 1);
    expect(JSON.stringify(body).length).toBeLessThan(4096);
    const one = problemBody(
      'validation_failed',
      undefined,
      problems.invalidFields([{ path: '/body/title', message: 'must not be empty' }]).options,
    );
    expect(one.detail).not.toContain('/body/title');
  });
});
