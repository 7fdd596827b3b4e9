/**
 * The documents describe the API truthfully (docs/design/self-description.md): valid OpenAPI 3.1, every
 * schema compiles under strict ajv, every example matches its schema, errors are
 * problem+json, bodies JSON only, integers integer, and each service registers exactly
 * the routes of the registry. (Every HTTP test's answers are checked against the same
 * documents by test/documented.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createManagementService } from '@studio/management-service';
import {
  EVENT_TYPES,
  elysiaPath,
  loadConfig,
  openApiDocument,
  operationsOf,
  PROBLEM_CODES,
  type Surface,
  TEST_EVENT_TYPE,
} from '@studio/shared';
import { createSql } from '@studio/shared/io';
import { createStorefrontService } from '@studio/storefront-service';
import { documentAjv } from './documented';
import { type Stack, startStack } from './harness';

type Json = Record<string, any>;
const SURFACES: Surface[] = ['storefront', 'management'];

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

/** The operations of the registry in a document: every path item's methods but the Storefront's CORS preflight (`options`, the gateway's own answer). */
const apiOperations = (doc: Json): [string, string, Json][] =>
  Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item)
      .filter(([m]) => m !== 'options')
      .map(([m, o]): [string, string, Json] => [path, m, o]),
  );

/** Every schema object under a node, with where it is. */
function* schemasIn(node: unknown, where: string): Generator<[string, Json]> {
  if (!node || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === 'schema' && v && typeof v === 'object') yield [`${where}/schema`, v];
    else yield* schemasIn(v, `${where}/${k}`);
  }
}

describe.each(SURFACES)('%s document', (surface) => {
  const { doc, ajv, compile, response } = documentAjv(surface);

  test('the gateway serves exactly the document built from the registry, and it is valid OpenAPI 3.1', async () => {
    const url = surface === 'storefront' ? s.storefrontUrl : s.managementUrl;
    const res = await fetch(`${url}/openapi.json`);
    expect(res.status).toBe(200);
    const served = await res.json();
    expect(served).toEqual(openApiDocument(surface, { publicUrl: url }) as Json);
    await SwaggerParser.validate(structuredClone(served));
  });

  test('one operation per registry row, with its scope, summary and tag', () => {
    const ops = operationsOf(surface);
    const documented = apiOperations(doc).map(([path, m, o]) => `${m.toUpperCase()} ${path} ${o.operationId}`);
    expect(documented.sort()).toEqual(ops.map((o) => `${o.method} ${o.path} ${o.id}`).sort());
    for (const o of ops) {
      const d = doc.paths[o.path][o.method.toLowerCase()];
      expect(d.summary).toBe(o.summary);
      expect(d.tags).toHaveLength(1);
      if (o.scope) expect(d['x-required-scope']).toBe(o.scope);
    }
  });

  test('every component and inline schema compiles under strict ajv', () => {
    for (const name of Object.keys(doc.components.schemas))
      expect(ajv.getSchema(`${surface}.json#/$defs/${name}`)).toBeFunction();
    for (const [where, schema] of schemasIn(doc.paths, '')) {
      try {
        compile(schema);
      } catch (err) {
        throw new Error(`${where}: ${err}`);
      }
    }
  });

  test('no schema types a value two ways (integers are integer, never string | integer)', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/"type":\[/);
    for (const [where, schema] of schemasIn(doc, '')) {
      const branches = (schema.anyOf ?? []).map((b: Json) => b.type);
      if (branches.includes('string') && (branches.includes('integer') || branches.includes('number')))
        throw new Error(`${where} is string | number`);
    }
  });

  test('errors are application/problem+json with the one Problem schema and its closed code list', () => {
    expect(doc.components.schemas.Problem.properties.code.enum).toEqual(PROBLEM_CODES);
    for (const [path, method, op] of apiOperations(doc)) {
      for (const [status, ref] of Object.entries<Json>(op.responses)) {
        if (Number(status) < 400) continue;
        const r = response(ref);
        expect(`${method} ${path} ${status}: ${Object.keys(r.content)}`).toBe(
          `${method} ${path} ${status}: application/problem+json`,
        );
        expect(r.content['application/problem+json'].schema.allOf[0]).toEqual({ $ref: '#/components/schemas/Problem' });
        expect(r.headers['X-Request-Id']).toBeDefined();
      }
      for (const status of ['401', '429', '503', '504']) expect(op.responses[status]).toBeDefined();
      expect(response(op.responses['429']).headers['Retry-After']).toBeDefined();
    }
  });

  test('request bodies are JSON only; every body and success answer has an example that matches its schema', () => {
    for (const [path, method, op] of apiOperations(doc)) {
      const media: [string, Json][] = [];
      if (op.requestBody) {
        expect(Object.keys(op.requestBody.content)).toEqual(['application/json']);
        media.push([`${method} ${path} body`, op.requestBody.content['application/json']]);
      }
      const [status, ok] = Object.entries<Json>(op.responses).find(([st]) => st.startsWith('2'))!;
      expect(ok.headers['X-Request-Id']).toBeDefined();
      if (status === '201') expect(ok.headers.Location).toBeDefined();
      media.push([`${method} ${path} ${status}`, ok.content['application/json']]);
      for (const [where, m] of media) {
        if (m.example === undefined) throw new Error(`${where}: no example`);
        const validate = compile(m.schema);
        if (!validate(m.example))
          throw new Error(`${where}: example does not match: ${JSON.stringify(validate.errors)}`);
      }
    }
  });

  test('a write\'s Idempotency-Key carries no example (a reference\'s "Test Request" would send that one value with every write)', () => {
    for (const [path, method, op] of apiOperations(doc)) {
      const p = (op.parameters ?? []).find((x: Json) => x.name === 'Idempotency-Key');
      if (method === 'get') {
        expect(p).toBeUndefined();
        continue;
      }
      if (!p) throw new Error(`${method} ${path}: no Idempotency-Key`);
      const fixed = {
        example: p.example,
        examples: p.examples,
        ...Object.fromEntries(
          ['example', 'examples', 'default', 'const', 'enum'].map((k) => [`schema.${k}`, p.schema[k]]),
        ),
      };
      expect(`${method} ${path} ${JSON.stringify(fixed)}`).toBe(`${method} ${path} {}`);
      expect(p.description).toContain('fresh');
    }
  });

  test('every operation documents the 405 `method_not_allowed` (with Allow) its path answers to a method it has not', () => {
    for (const [path, method, op] of apiOperations(doc)) {
      if (!op.responses['405']) throw new Error(`${method} ${path}: no 405`);
      const r = response(op.responses['405']);
      expect(r.headers.Allow).toEqual({ $ref: '#/components/headers/Allow' });
      expect(r.content['application/problem+json'].schema.allOf[1].properties.code.enum).toEqual([
        'method_not_allowed',
      ]);
    }
  });

  test(
    surface === 'storefront'
      ? 'every answer documents the CORS headers, and every path its preflight'
      : 'no CORS headers or preflights',
    () => {
      const CORS = ['Access-Control-Allow-Origin', 'Access-Control-Expose-Headers'];
      for (const [path, method, op] of apiOperations(doc)) {
        for (const [status, r] of Object.entries<Json>(op.responses)) {
          const names = Object.keys(response(r).headers ?? {});
          const where = `${method} ${path} ${status}`;
          expect(`${where}: ${CORS.filter((h) => names.includes(h))}`).toBe(
            `${where}: ${surface === 'storefront' ? CORS : ''}`,
          );
        }
      }
      for (const [path, item] of Object.entries<Json>(doc.paths)) {
        if (surface === 'management') {
          expect(item.options).toBeUndefined();
          continue;
        }
        const preflight = item.options;
        if (!preflight) throw new Error(`${path}: no preflight`);
        expect(preflight.security).toEqual([]);
        expect(preflight.tags).toEqual(['CORS']);
        expect(Object.keys(preflight.responses)).toEqual(['204']);
        expect(Object.keys(preflight.responses['204'].headers).sort()).toEqual(
          [
            'X-Request-Id',
            'traceresponse',
            ...CORS,
            'Access-Control-Allow-Methods',
            'Access-Control-Allow-Headers',
            'Access-Control-Max-Age',
          ].sort(),
        );
      }
      if (surface === 'storefront') expect(doc.tags.map((t: Json) => t.name)).toContain('CORS');
    },
  );

  test('the service registers exactly the routes of the registry, in both directions', () => {
    const config = loadConfig({});
    const sql = createSql(config.DATABASE_URL, { max: 1 });
    const app =
      surface === 'storefront'
        ? createStorefrontService({ config, sql, redis: null })
        : createManagementService({ config, sql, redis: null });
    const registered = app.routes
      .filter((r) => r.path.startsWith('/v1/'))
      .map((r) => `${r.method} ${r.path}`)
      .sort();
    expect(registered).toEqual(
      operationsOf(surface)
        .map((o) => `${o.method} ${elysiaPath(o.path)}`)
        .sort(),
    );
    const others = app.routes.filter((r) => !r.path.startsWith('/v1/')).map((r) => r.path);
    expect(others.every((p) => p === '/healthz' || p === '/readyz')).toBe(true);
    void sql.end();
  });
});

describe('webhooks (OpenAPI 3.1 `webhooks`, docs/design/events.md–16)', () => {
  const { doc, compile } = documentAjv('management');

  test('every event type has an entry, and the test event: a signed POST whose example matches its body schema', () => {
    expect(Object.keys(doc.webhooks)).toEqual([...EVENT_TYPES, TEST_EVENT_TYPE]);
    for (const [type, item] of Object.entries<Json>(doc.webhooks)) {
      expect(`${type}: ${Object.keys(item)}`).toBe(`${type}: post`);
      const op = item.post;
      expect(op.parameters.map((p: Json) => p.$ref)).toEqual(
        ['WebhookId', 'WebhookTimestamp', 'WebhookSignature'].map((p) => `#/components/parameters/${p}`),
      );
      const media = op.requestBody.content['application/json'];
      expect(media.schema.properties.type.const).toBe(type);
      expect(media.example.type).toBe(type);
      const validate = compile(media.schema);
      if (!validate(media.example))
        throw new Error(`${type}: example does not match: ${JSON.stringify(validate.errors)}`);
      // the body's own type only: another type's example is refused
      expect(validate({ ...media.example, type: type === 'class.created' ? 'class.updated' : 'class.created' })).toBe(
        false,
      );
      expect(Object.keys(op.responses).sort()).toEqual(['2XX', '410', 'default']);
    }
    expect(doc.components.parameters.WebhookSignature.name).toBe('webhook-signature');
    expect(doc.info.description).toContain('`webhook-signature`');
    expect(openApiDocument('storefront', { publicUrl: 'http://127.0.0.1' }).webhooks).toBeUndefined();
  });

  test("data.object is the resource's schema; previousAttributes exactly on *.updated and *.rescheduled", () => {
    for (const type of EVENT_TYPES) {
      const data = doc.webhooks[type].post.requestBody.content['application/json'].schema.properties.data;
      const resource = {
        class: 'Class',
        occurrence: 'Occurrence',
        member: 'Member',
        membership: 'Member',
        content: 'Video',
        plan: 'Plan',
        instructor: 'Instructor',
        location: 'Location',
        room: 'Room',
        coupon: 'Coupon',
        program: 'Program',
      }[type.split('.')[0]!];
      expect(`${type}: ${data.properties.object.$ref}`).toBe(`${type}: #/components/schemas/${resource}`);
      const previous = /\.(updated|rescheduled)$/.test(type);
      expect(`${type}: ${data.required}`).toBe(`${type}: ${previous ? 'object,previousAttributes' : 'object'}`);
      expect(`${type}: ${'previousAttributes' in data.properties}`).toBe(`${type}: ${previous}`);
    }
  });
});
