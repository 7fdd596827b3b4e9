/**
 * Pages that say only what is so, held to what the processes answer over HTTP:
 * the 405s and CORS headers the documents now describe, one spelling of the JSON media
 * type, requests counted on every process's metrics (`promtool check metrics` lints them in
 * scripts/ci/metrics-lint.ts, a .ci/run step), dashboard requests counted, and a demo whose
 * "Sunday Meditation" is on Sundays.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createApiKey } from '@studio/control';
import { JSON_TYPE, openApiDocument, SCOPES, type Surface } from '@studio/shared';
import { get, signIn } from '../dashboard/test/dashboard-helpers';
import { seedDemo } from '../scripts/lib/seed';
import { expectProblem, type Stack, startStack } from './harness';

type Json = Record<string, any>;

let s: Stack;
let studioId: string;
let pk: string;
let sk: string;
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio()).id;
  pk = (await s.key(studioId, 'publishable')).key;
  sk = (await s.key(studioId, 'secret', SCOPES)).key;
});
afterAll(() => s.close());

const documentOf = (surface: Surface) => openApiDocument(surface, { publicUrl: 'http://127.0.0.1' }) as Json;
/** A documented header's example: the value the document says is sent. */
const documented = (doc: Json, header: string) => doc.components.headers[header].example;

describe('405', () => {
  test.each(['storefront', 'management'] as Surface[])(
    '%s: every path answers another method 405 with Allow naming exactly its documented methods',
    async (surface) => {
      const doc = documentOf(surface);
      const call = surface === 'storefront' ? s.sf : s.mg;
      const key = surface === 'storefront' ? pk : sk;
      for (const [path, item] of Object.entries<Json>(doc.paths)) {
        const methods = Object.keys(item)
          .filter((m) => m !== 'options')
          .map((m) => m.toUpperCase());
        const other = ['PUT', 'POST', 'DELETE', 'PATCH', 'GET'].find((m) => !methods.includes(m))!;
        const url = path.replace(/\{[^}]+\}/g, 'x');
        const res = await call(url, key, { method: other });
        await expectProblem(res.clone(), 405, 'method_not_allowed');
        expect(`${other} ${path}: ${res.headers.get('allow')?.split(', ').sort()}`).toBe(
          `${other} ${path}: ${methods.sort()}`,
        );
        // what the document says the path's operations answer
        for (const m of Object.keys(item).filter((x) => x !== 'options'))
          expect(item[m].responses['405']).toBeDefined();
      }
    },
  );
});

describe('Storefront CORS, as documented', () => {
  const doc = documentOf('storefront');
  const allowOrigin = documented(doc, 'Access-Control-Allow-Origin');
  const expose = documented(doc, 'Access-Control-Expose-Headers');

  test('a 200, a 304, a 404, a 405 and a 401 each carry the documented Allow-Origin and Expose-Headers', async () => {
    const ok = await s.sf('/v1/classes', pk);
    const answers = [
      ok,
      await s.sf('/v1/classes', pk, { headers: { 'if-none-match': ok.headers.get('etag')! } }),
      await s.sf('/v1/site', pk),
      await s.sf('/v1/classes', pk, { method: 'POST' }),
      await s.sf('/v1/classes', null),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 304, 404, 405, 401]);
    for (const r of answers) {
      expect(`${r.status} ${r.headers.get('access-control-allow-origin')}`).toBe(`${r.status} ${allowOrigin}`);
      expect(`${r.status} ${r.headers.get('access-control-expose-headers')}`).toBe(`${r.status} ${expose}`);
    }
    // the documented ETag promise: the 200 and the 304 carry one, a problem none
    expect([answers[0]!.headers.has('etag'), answers[1]!.headers.has('etag'), answers[2]!.headers.has('etag')]).toEqual(
      [true, true, false],
    );
  });

  test("a key restricted to websites: its successful answer names the calling origin, as the header's description says", async () => {
    const restricted = await createApiKey(s.sql, {
      studioId,
      kind: 'publishable',
      name: 'site',
      allowedOrigins: ['https://lotus.example'],
    });
    const res = await s.sf('/v1/instructors', restricted.key, { headers: { origin: 'https://lotus.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://lotus.example');
    expect(doc.components.headers['Access-Control-Allow-Origin'].description).toContain('calling page');
  });

  test('a preflight is answered 204 without a key, with the documented headers, on every path', async () => {
    for (const path of Object.keys(doc.paths)) {
      const url = path.replace(/\{[^}]+\}/g, 'x');
      const res = await fetch(`${s.storefrontUrl}${url}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://lotus.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(`${path} ${res.status}`).toBe(`${path} 204`);
      const headers = doc.paths[path].options.responses['204'].headers as Json;
      for (const name of Object.keys(headers)) {
        const want = documented(doc, name);
        if (want === undefined) expect(res.headers.get(name)).toBeTruthy();
        else expect(`${path} ${name}: ${res.headers.get(name)}`).toBe(`${path} ${name}: ${want}`);
      }
    }
  });
});

test('traceresponse: documented on every answer of both documents, and sent on each kind of answer', async () => {
  for (const surface of ['storefront', 'management'] as Surface[]) {
    for (const [path, item] of Object.entries<Json>(documentOf(surface).paths))
      for (const [method, op] of Object.entries<Json>(item))
        for (const [status, res] of Object.entries<Json>(op.responses)) {
          const answer = res.$ref ? documentOf(surface).components.responses[res.$ref.split('/').pop()] : res;
          expect(`${method} ${path} ${status}: ${Object.hasOwn(answer.headers ?? {}, 'traceresponse')}`).toBe(
            `${method} ${path} ${status}: true`,
          );
        }
  }
  const ok = await s.sf('/v1/classes', pk);
  for (const r of [
    ok,
    await s.sf('/v1/classes', pk, { headers: { 'if-none-match': ok.headers.get('etag')! } }),
    await s.sf('/v1/classes', pk, { method: 'OPTIONS' }),
    await s.mg('/v1/instructors', sk),
    await s.mg('/v1/instructors', null),
    await s.mg('/v1/nowhere', sk),
  ])
    expect(`${r.status} ${r.headers.get('traceresponse')}`).toMatch(/^\d{3} 00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/);
});

test('every JSON answer, of every process, spells its media type one way', async () => {
  const create = () =>
    s.mg('/v1/instructors', sk, {
      method: 'POST',
      body: JSON.stringify({ name: 'Noor' }),
      headers: { 'content-type': 'application/json', 'idempotency-key': 'one-spelling' },
    });
  const answers: [string, Response][] = [
    ['storefront read', await s.sf('/v1/classes', pk)],
    ['storefront read, cached', await s.sf('/v1/classes', pk)],
    ['management read', await s.mg('/v1/instructors', sk)],
    ['management write', await create()],
    ['management write, replayed', await create()],
    ['document', await fetch(`${s.managementUrl}/openapi.json`)],
    ['surface healthz', await fetch(`${s.storefrontUrl}/healthz`)],
    ['surface readyz', await fetch(`${s.managementUrl}/readyz`)],
    ['dashboard readyz', await fetch(`${s.dashboardUrl}/readyz`)],
    ['ops healthz', await fetch(`${s.opsUrl}/healthz`)],
    ['ops readyz', await fetch(`${s.opsUrl}/readyz`)],
    ['service healthz', await fetch(`${s.storefrontServiceUrl}/healthz`)],
    ['service readyz', await fetch(`${s.managementServiceUrl}/readyz`)],
  ];
  expect(answers.map(([what, r]) => `${what}: ${r.status} ${r.headers.get('content-type')}`)).toEqual(
    answers.map(([what, r]) => `${what}: ${r.status} ${JSON_TYPE}`),
  );
});

describe('metrics', () => {
  test("the gateway's and both services' /metrics count the requests they answered", async () => {
    await s.sf('/v1/classes', pk);
    await s.mg('/v1/instructors', sk);
    await fetch(`${s.dashboardUrl}/sign-in`);
    for (const url of [
      `${s.opsUrl}/metrics`,
      `${s.storefrontServiceUrl}/metrics`,
      `${s.managementServiceUrl}/metrics`,
    ]) {
      const text = await (await fetch(url)).text();
      expect(text).toContain('studio_http_requests_total{');
    }
  });

  test('dashboard requests are counted with surface="dashboard", labelled by route, never by raw path', async () => {
    await fetch(`${s.dashboardUrl}/sign-in`);
    await fetch(`${s.dashboardUrl}/keys/key_ThisIsNotALabel/roll`, { redirect: 'manual' });
    await fetch(`${s.dashboardUrl}/nowhere-at-all`);
    const text = await (await fetch(`${s.dashboardOpsUrl}/metrics`)).text();
    const lines = text.split('\n').filter((l) => l.startsWith('studio_http_requests_total{surface="dashboard"'));
    expect(lines.some((l) => l.includes('operation="/sign-in",status="200"'))).toBe(true);
    expect(lines.some((l) => l.includes('operation="/keys/{keyId}/roll",status="303"'))).toBe(true);
    expect(lines.some((l) => l.includes('operation="unknown",status="404"'))).toBe(true);
    expect(text).not.toContain('ThisIsNotALabel');
    expect(text).not.toContain('nowhere-at-all');
    expect(text).toContain('studio_http_request_duration_seconds_count{surface="dashboard",operation="/sign-in"}');
  });
});

test('the demo\'s "Sunday Meditation" runs on Sundays (in the studio\'s time zone)', async () => {
  const demoId = (await seedDemo(s.sql, s.config)).studio.id;
  const days = await s.sql<{ day: string }[]>`
    select distinct to_char(o.starts_at at time zone s.timezone, 'Day') as day
    from occurrences o join classes c on c.studio_id = o.studio_id and c.id = o.class_id join studios s on s.id = o.studio_id
    where o.studio_id = ${demoId} and c.title = 'Sunday Meditation'`;
  expect(days.map((d) => d.day.trim())).toEqual(['Sunday']);
});

describe('pages that said what is not so', () => {
  test('/docs/problems: more scopes come from a new key, not a roll; an origin is added with the dashboard\'s own button, "Websites"', async () => {
    const html = await (await fetch(`${s.storefrontUrl}/docs/problems`)).text();
    const section = (code: string) =>
      html.slice(
        html.indexOf(`<section id="${code}">`),
        html.indexOf('</section>', html.indexOf(`<section id="${code}">`)),
      );
    expect(section('scope_required')).toContain('Create a secret key with that scope');
    expect(section('scope_required')).not.toMatch(/roll one with more scopes/);
    expect(section('origin_not_allowed')).toContain('Websites button');
    // and that is what the keys page calls it, on a publishable key's row
    const session = await signIn(s, studioId);
    const keys = await (await get(s, '/keys', session.cookie)).text();
    expect(keys).toMatch(/<a href="\/keys\/key_[0-9A-Za-z]+\/origins" class="btn btn-quiet">Websites<\/a>/);
  });

  test('the Storefront document promises an ETag only on a 200 and a 304', () => {
    const doc = documentOf('storefront');
    expect(doc.info.description).not.toContain('Every answer carries `ETag`');
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        for (const [status, r] of Object.entries<Json>(op.responses)) {
          const resolved = r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r;
          if (resolved.headers?.ETag) expect(`${method} ${path} ${status}`).toMatch(/ (200|304)$/);
        }
      }
    }
  });

  test('the README says login-link prints a URL (it opens nothing)', async () => {
    const readme = await Bun.file(new URL('../README.md', import.meta.url)).text();
    const lines = readme.split('\n').filter((l) => l.includes('admin login-link') && l.includes('#'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toMatch(/opens the dashboard/);
    expect(lines.some((l) => /prints/.test(l))).toBe(true);
  });
});

test("/healthz answers the same JSON on every port: the gateway's four and each service's", async () => {
  for (const base of [
    s.storefrontUrl,
    s.managementUrl,
    s.dashboardUrl,
    s.opsUrl,
    s.storefrontServiceUrl,
    s.managementServiceUrl,
  ]) {
    const res = await fetch(`${base}/healthz`);
    expect(`${base} ${res.status} ${res.headers.get('content-type')}`).toBe(`${base} 200 ${JSON_TYPE}`);
    expect(await res.json()).toEqual({ status: 'ok' });
  }
});
