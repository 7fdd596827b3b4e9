import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  StorefrontClassList,
  StorefrontConfig,
  StorefrontInstructorList,
  StorefrontPlanList,
  StorefrontPolicies,
  StorefrontSite,
} from '@studio/shared/schemas';
import { publishSite } from '../../scripts/lib/studios';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { inHours, instructor, klass, plan } from './fixtures';

let s: Stack;
let studio: { id: string };
let other: { id: string };
let key: string;
let otherKey: string;
const ids: Record<string, string> = {};

async function read<T>(path: string, schema: TSchema, k = key): Promise<T> {
  const res = await s.sf(path, k);
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  const errors = [...Value.Errors(schema, body)].map((e) => `${e.path} ${e.message}`);
  expect(errors).toEqual([]);
  return body as T;
}
const classesOf = async (query = '', k = key) =>
  (await read<StorefrontClassList>(`/v1/classes${query}`, StorefrontClassList, k)).classes;

beforeAll(async () => {
  s = await startStack();
  studio = await s.studio({
    name: 'Lotus Yoga',
    slug: 'lotus-reads',
    timezone: 'Europe/Berlin',
    modes: ['broadcast', 'two_way'],
  });
  other = await s.studio({ name: 'Other Place' });
  key = (await s.key(studio.id, 'publishable')).key;
  otherKey = (await s.key(other.id, 'publishable')).key;

  const ana = (ids.ana = await instructor(s.sql, studio.id, { name: 'Ana', disciplines: ['yoga', 'pilates'] }));
  const ben = (ids.ben = await instructor(s.sql, studio.id, { name: 'Ben' }));
  ids.gone = await instructor(s.sql, studio.id, { name: 'Zed (inactive)', active: false });
  const stranger = (ids.stranger = await instructor(s.sql, other.id, { name: 'Stranger' }));

  ids.yoga = (
    await klass(s.sql, studio.id, {
      instructorId: ana,
      title: 'Morning Flow',
      startsAt: inHours(2),
      count: 3,
      discipline: 'yoga',
      level: 'beginner',
    })
  ).id;
  ids.pilates = (
    await klass(s.sql, studio.id, {
      instructorId: ben,
      title: 'Core Pilates',
      startsAt: inHours(5),
      discipline: 'pilates',
      level: 'advanced',
      mode: 'two_way',
    })
  ).id;
  ids.far = (
    await klass(s.sql, studio.id, {
      instructorId: ben,
      title: 'Far Away',
      startsAt: inHours(24 * 20),
      discipline: 'yoga',
    })
  ).id;
  ids.private = (
    await klass(s.sql, studio.id, {
      instructorId: ana,
      title: 'Private Session',
      startsAt: inHours(3),
      visibility: 'private',
    })
  ).id;
  ids.unlisted = (
    await klass(s.sql, studio.id, {
      instructorId: ana,
      title: 'Unlisted',
      startsAt: inHours(4),
      visibility: 'unlisted',
    })
  ).id;
  ids.cancelled = (
    await klass(s.sql, studio.id, {
      instructorId: ben,
      title: 'Cancelled Class',
      startsAt: inHours(8),
      status: 'cancelled',
    })
  ).id;
  ids.past = (await klass(s.sql, studio.id, { instructorId: ben, title: 'Yesterday', startsAt: inHours(-24) })).id;
  const partly = await klass(s.sql, studio.id, {
    instructorId: ben,
    title: 'Partly Cancelled',
    startsAt: inHours(30),
    count: 2,
  });
  ids.partly = partly.id;
  ids.cancelledOcc = partly.occurrences[0]!;
  await s.sql`update occurrences set status = 'cancelled', cancelled_at = now() where id = ${ids.cancelledOcc}`;
  ids.foreign = (
    await klass(s.sql, other.id, { instructorId: stranger, title: 'Foreign Class', startsAt: inHours(2) })
  ).id;

  ids.plan = await plan(s.sql, studio.id, { name: 'Drop-in' });
  ids.privatePlan = await plan(s.sql, studio.id, { name: 'Staff', visibility: 'private' });
  ids.archivedPlan = await plan(s.sql, studio.id, { name: 'Old', status: 'archived' });
  ids.foreignPlan = await plan(s.sql, other.id, { name: 'Foreign plan' });
});
afterAll(() => s.close());

describe('storefrontListClasses', () => {
  test('upcoming live occurrences of public classes, ordered by start, with the contract fields', async () => {
    const classes = await classesOf();
    expect(classes.map((c) => c.classTitle)).toEqual([
      'Morning Flow',
      'Core Pilates',
      'Morning Flow',
      'Morning Flow',
      'Partly Cancelled',
    ]);
    const starts = classes.map((c) => Date.parse(c.startsAt));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    const pilates = classes[1]!;
    expect(pilates).toMatchObject({
      classId: ids.pilates,
      discipline: 'pilates',
      level: 'advanced',
      mode: 'two_way',
      durationMinutes: 60,
      instructorId: ids.ben,
      instructorName: 'Ben',
    });
    expect(pilates.id).toStartWith('occ_');
    expect(pilates.startsAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test('a class without a discipline is listed with discipline "" (a string, as the specification types the field)', async () => {
    const bare = await s.studio();
    const teacher = await instructor(s.sql, bare.id, { name: 'Cleo' });
    await klass(s.sql, bare.id, {
      instructorId: teacher,
      startsAt: inHours(5),
      discipline: null,
      title: 'Open Studio',
    });
    const [entry] = await classesOf('', (await s.key(bare.id, 'publishable')).key);
    expect(entry).toMatchObject({ classTitle: 'Open Studio', discipline: '' });
  });

  test("private, unlisted, cancelled, past and other studios' items never appear", async () => {
    const from = encodeURIComponent(inHours(-48).toISOString());
    const classes = await classesOf(`?from=${from}&to=${encodeURIComponent(inHours(24 * 80).toISOString())}`);
    const classIds = new Set(classes.map((c) => c.classId));
    for (const hidden of [ids.private, ids.unlisted, ids.cancelled, ids.past, ids.foreign])
      expect(classIds.has(hidden!)).toBe(false);
    expect(classes.map((c) => c.id)).not.toContain(ids.cancelledOcc);
    expect(classes.filter((c) => c.classId === ids.partly)).toHaveLength(1);
    expect(classIds.has(ids.far!)).toBe(true); // the wide window does include the far class
    expect(classes.every((c) => Date.parse(c.startsAt) >= Date.now() - 60_000)).toBe(true);
  });

  test('the other studio sees only its own class', async () => {
    const classes = await classesOf('', otherKey);
    expect(classes.map((c) => c.classId)).toEqual([ids.foreign!]);
  });

  test('filters: from / to window, discipline, level, instructorId', async () => {
    expect((await classesOf(`?to=${encodeURIComponent(inHours(3).toISOString())}`)).map((c) => c.classTitle)).toEqual([
      'Morning Flow',
    ]);
    expect(
      (
        await classesOf(
          `?from=${encodeURIComponent(inHours(4).toISOString())}&to=${encodeURIComponent(inHours(6).toISOString())}`,
        )
      ).map((c) => c.classId),
    ).toEqual([ids.pilates!]);
    expect(new Set((await classesOf('?discipline=pilates')).map((c) => c.classId))).toEqual(new Set([ids.pilates!]));
    expect((await classesOf('?level=beginner')).every((c) => c.classId === ids.yoga)).toBe(true);
    expect((await classesOf('?level=beginner')).length).toBe(3);
    expect(new Set((await classesOf(`?instructorId=${ids.ben}`)).map((c) => c.instructorName))).toEqual(
      new Set(['Ben']),
    );
    expect(await classesOf(`?instructorId=${ids.stranger}`)).toEqual([]);
    // the default window is 14 days: the class in 20 days appears only with a wider `to`
    expect((await classesOf()).some((c) => c.classId === ids.far)).toBe(false);
    expect(
      (await classesOf(`?to=${encodeURIComponent(inHours(24 * 21).toISOString())}`)).some((c) => c.classId === ids.far),
    ).toBe(true);
    // a valid window before 1970 is judged as sent (then moved into the years the database takes): past, so empty
    expect(await classesOf('?from=1969-12-01T00:00:00Z&to=1969-12-08T00:00:00Z')).toEqual([]);
    expect(await classesOf('?from=0001-01-01T00:00:00Z&to=0001-01-02T00:00:00Z')).toEqual([]);
  });

  test.each([
    ['?from=yesterday', '/query/from'],
    ['?from=2026-02-30T10:00:00Z', '/query/from'],
    ['?to=2026-12-01', '/query/to'],
    ['?level=expert', '/query/level'],
    ['?discipline=', '/query/discipline'],
    ['?instructorId=bob', '/query/instructorId'],
    [
      `?from=${encodeURIComponent(inHours(10).toISOString())}&to=${encodeURIComponent(inHours(5).toISOString())}`,
      '/query/to',
    ],
    [`?to=${encodeURIComponent(inHours(24 * 91).toISOString())}`, '/query/to'],
  ])('bad filter %s: 422 naming %s', async (query, path) => {
    const body = await expectProblem(await s.sf(`/v1/classes${query}`, key), 422, 'validation_failed');
    expect((body.errors as { path: string }[]).map((e) => e.path)).toContain(path);
  });
});

test('storefrontListInstructors: active instructors of the studio only', async () => {
  const { instructors } = await read<StorefrontInstructorList>('/v1/instructors', StorefrontInstructorList);
  expect(instructors.map((i) => i.name)).toEqual(['Ana', 'Ben']);
  expect(instructors[0]).toEqual({
    id: ids.ana!,
    name: 'Ana',
    bio: 'Bio',
    photoUrl: null,
    disciplines: ['yoga', 'pilates'],
  });
  const theirs = await read<StorefrontInstructorList>('/v1/instructors', StorefrontInstructorList, otherKey);
  expect(theirs.instructors.map((i) => i.id)).toEqual([ids.stranger!]);
});

test('storefrontListPlans: active public plans of the studio only', async () => {
  const { plans } = await read<StorefrontPlanList>('/v1/plans', StorefrontPlanList);
  expect(plans).toEqual([
    {
      id: ids.plan!,
      name: 'Drop-in',
      description: 'One class',
      type: 'drop_in',
      config: { priceCents: 1500, currency: 'USD' },
    },
  ]);
});

test('storefrontGetConfig and storefrontGetPolicies: defaults for a new studio', async () => {
  const config = await read<StorefrontConfig>('/v1/config', StorefrontConfig);
  expect(config).toEqual({
    studio: { id: studio.id, name: 'Lotus Yoga', slug: 'lotus-reads' },
    timezone: 'Europe/Berlin',
    currency: 'USD',
    locale: 'en-US',
    enabledModes: ['broadcast', 'two_way'],
    branding: { primaryColor: null, logoUrl: null },
  });
  const policies = await read<StorefrontPolicies>('/v1/policies', StorefrontPolicies);
  expect(policies).toMatchObject({
    cancellation: null,
    lateCancelMinutes: 0,
    noShow: null,
    terms: null,
    privacy: null,
    waiver: null,
  });
  await s.sql`insert into policies ${s.sql({ studioId: other.id, cancellation: 'Free until 12 h before', lateCancelMinutes: 720 })}`;
  expect(await read('/v1/policies', StorefrontPolicies, otherKey)).toMatchObject({
    cancellation: 'Free until 12 h before',
    lateCancelMinutes: 720,
  });
  expect(await read('/v1/policies', StorefrontPolicies)).toMatchObject({ cancellation: null, lateCancelMinutes: 0 });
});

test('a studio deleted while a gateway still holds its key (before its eviction): config and policies are 403 studio_required, as the gateway says', async () => {
  const gone = await s.studio({ name: 'Gone Soon' });
  const { key: k } = await s.key(gone.id, 'publishable');
  expect((await s.sf('/v1/instructors', k)).status).toBe(200); // the gateway now holds the key's record
  // deleted behind the gateway's back: no eviction reaches it, so the call goes on to the service
  await s.sql`update studios set deleted_at = now() where id = ${gone.id}`;
  for (const path of ['/v1/config', '/v1/policies']) {
    const problem = await expectProblem(await s.sf(path, k), 403, 'studio_required');
    expect(problem.detail).toContain('no longer exists');
  }
});

test("storefrontGetSite: 404 site_not_published until published, then only the own studio's site", async () => {
  await expectProblem(await s.sf('/v1/site', key), 404, 'site_not_published');
  // an unpublished draft row is still not public
  await s.sql`insert into sites ${s.sql({ studioId: studio.id, title: 'Draft' })}`;
  await expectProblem(await s.sf('/v1/site', key), 404, 'site_not_published');
  await s.sql`delete from sites where studio_id = ${studio.id}`;
  await publishSite(s.sql, other.id, {
    title: 'Other Place',
    tagline: 'Move',
    address: { city: 'Oslo' },
    social: { instagram: '@other' },
  });
  await s.bus.storefrontChanged(other.id);
  const site = await read<StorefrontSite>('/v1/site', StorefrontSite, otherKey);
  expect(site).toMatchObject({
    title: 'Other Place',
    tagline: 'Move',
    description: null,
    address: { city: 'Oslo' },
    social: { instagram: '@other' },
  });
  await expectProblem(await s.sf('/v1/site', key), 404, 'site_not_published');
});

test("a deactivated instructor's scheduled class is still listed under their name; the instructor is not (docs/design/storefront.md)", async () => {
  const st = await s.studio({ name: 'Staff Change' });
  const { key: k } = await s.key(st.id, 'publishable');
  const zed = await instructor(s.sql, st.id, { name: 'Zed (left)', active: false });
  await klass(s.sql, st.id, { instructorId: zed, title: 'Booked Already', startsAt: inHours(5) });
  expect((await classesOf('', k)).map((c) => [c.classTitle, c.instructorName])).toEqual([
    ['Booked Already', 'Zed (left)'],
  ]);
  expect((await read<StorefrontInstructorList>('/v1/instructors', StorefrontInstructorList, k)).instructors).toEqual(
    [],
  );
});
