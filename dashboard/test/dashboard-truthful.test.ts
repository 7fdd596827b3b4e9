/**
 * The dashboard, over plain HTTP: a call is found by the `instance` of its problem
 * (what a developer copies from an error), the activity list names operations by their
 * summary and breaks their ids only between words, a roll says which key replaced which,
 * and the chart's axis labels are page text.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Stack, startStack } from '../../test/harness';
import { get, postForm, signIn } from './dashboard-helpers';

let s: Stack;
let studioId: string;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio({ name: 'Lotus Yoga' })).id;
  session = await signIn(s, studioId);
});
afterAll(() => s.close());

const page = async (path: string) => (await get(s, path, session.cookie)).text();
const search = (text: string) => get(s, `/activity?requestId=${encodeURIComponent(text)}`, session.cookie);

test("the request-id search finds a call by its problem's instance (urn:request:…), with spaces and quotes around it", async () => {
  const { key } = await s.key(studioId, 'secret', ['instructors:read'], 'reader');
  const refused = await s.mg('/v1/classes', key);
  const problem = (await refused.json()) as { instance: string; code: string };
  expect(problem.code).toBe('scope_required');
  expect(problem.instance).toStartWith('urn:request:req_');
  const requestId = problem.instance.slice('urn:request:'.length);
  await s.gateway.activity.flush();
  for (const pasted of [
    problem.instance,
    `  ${problem.instance}\n`,
    `"${problem.instance}"`,
    requestId,
    ` ${requestId} `,
  ]) {
    const res = await search(pasted);
    expect(`${JSON.stringify(pasted)} -> ${res.status} ${res.headers.get('location')}`).toBe(
      `${JSON.stringify(pasted)} -> 303 /activity/${requestId}`,
    );
  }
  const missing = await search('urn:request:req_nothing');
  expect(missing.status).toBe(404);
  expect(await missing.text()).toContain('urn:request:req_nothing'); // the form keeps what was pasted
});

test('an activity row names its operation by summary, and its id breaks only between words', async () => {
  const { key } = await s.key(studioId, 'secret', ['instructors:read'], 'lister');
  expect((await s.mg('/v1/instructors', key)).status).toBe(200);
  await s.gateway.activity.flush();
  const html = await page('/activity');
  const cell = /<td data-label="Operation" class="op" data-operation="managementListInstructors">(.*?)<\/td>/s.exec(
    html,
  )?.[1];
  expect(cell).toBe(
    '<span class="op-name">List instructors</span><br><code class="op-id small">management<wbr>List<wbr>Instructors</code>',
  );
});

test('after a roll, the keys page says which key replaced which', async () => {
  const old = await s.key(studioId, 'secret', ['instructors:read'], 'booking-sync');
  const rolled = await postForm(s, `/keys/${old.id}/roll`, { csrf: session.csrf, grace: '24h' }, session.cookie);
  expect(rolled.status).toBe(201);
  const keys = await s.sql<{ id: string; hint: string; rolledFrom: string | null }[]>`
    select id, hint, rolled_from from api_keys where studio_id = ${studioId} and name = 'booking-sync' order by created_at`;
  expect(keys).toHaveLength(2);
  const [before, after] = [keys[0]!, keys[1]!];
  expect(after.rolledFrom).toBe(before.id);
  const plain = await s.key(studioId, 'secret', ['instructors:read'], 'plain');
  const html = await page('/keys');
  const rowOf = (id: string) => {
    const from = html.indexOf(`data-key-id="${id}"`);
    return html.slice(from, html.indexOf('</tr>', from));
  };
  expect(rowOf(before.id)).toContain(`Rolled → replaced by <code>${after.hint}</code>`);
  expect(rowOf(after.id)).toContain(`Replaces <code>${before.hint}</code> (rolled)`);
  expect(before.id).toBe(old.id);
  // a key made by Create says neither
  expect(rowOf(plain.id)).toContain('plain');
  expect(rowOf(plain.id)).not.toContain('lineage');
});

test("the chart's axis labels are page text beside and under the bars, not text inside the scaled SVG", async () => {
  const html = await page('/activity');
  const svg = html.slice(html.indexOf('<svg class="chart"'), html.indexOf('</svg>'));
  expect(svg).not.toContain('<text');
  expect(svg).toContain('preserveAspectRatio="none"');
  const x = /<div class="chart-x" aria-hidden="true">(.*?)<\/div>/s.exec(html)?.[1] ?? '';
  expect([...x.matchAll(/<span>(\d\d:00)<\/span>/g)]).toHaveLength(6);
  expect(html).toMatch(/<div class="chart-y" aria-hidden="true"><span>\d+<\/span><span>0<\/span><\/div>/);
  const month = await page('/activity?chart=30d');
  expect([...month.matchAll(/<span>(\d\d-\d\d)<\/span>/g)]).toHaveLength(6);
});
