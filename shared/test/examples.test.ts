/**
 * The documented examples (shared/src/schemas/examples.ts) at run time: each one passes its
 * schema (patterns, ranges, lengths, formats, no unknown fields), every body and record
 * schema has one, and the ids, timestamps and configs are the kind the API really writes.
 */
import { describe, expect, test } from 'bun:test';
import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import * as classesModule from '../src/schemas/classes';
import { Class, CreateClassBody, UpdateClassBody } from '../src/schemas/classes';
import * as contentModule from '../src/schemas/content';
import { UpdateContentBody, Video } from '../src/schemas/content';
import * as couponsModule from '../src/schemas/coupons';
import { Coupon, CouponConfig, CreateCouponBody } from '../src/schemas/coupons';
import * as eventsModule from '../src/schemas/events';
import { Event } from '../src/schemas/events';
import { EXAMPLES, type Examples } from '../src/schemas/examples';
import { isCurrency } from '../src/schemas/fields';
import * as instructorsModule from '../src/schemas/instructors';
import { CreateInstructorBody, Instructor, UpdateInstructorBody } from '../src/schemas/instructors';
import { KeyInfo } from '../src/schemas/keys';
import * as locationsModule from '../src/schemas/locations';
import {
  CreateLocationBody,
  CreateRoomBody,
  Location,
  Room,
  UpdateLocationBody,
  UpdateRoomBody,
} from '../src/schemas/locations';
import * as membersModule from '../src/schemas/members';
import { InviteMemberBody, Member, UpdateMemberBody } from '../src/schemas/members';
import * as plansModule from '../src/schemas/plans';
import { CreatePlanBody, PLAN_CONFIGS, Plan, UpdatePlanBody } from '../src/schemas/plans';
import * as programsModule from '../src/schemas/programs';
import { CreateProgramBody, Program, UpdateProgramBody } from '../src/schemas/programs';
import { Sandbox, SandboxSeed } from '../src/schemas/sandboxes';
import * as scheduleModule from '../src/schemas/schedule';
import { Occurrence, RescheduleBody } from '../src/schemas/schedule';
import * as storefrontModule from '../src/schemas/storefront';
import {
  StorefrontClassList,
  StorefrontConfig,
  StorefrontInstructorList,
  StorefrontPlanList,
  StorefrontPolicies,
  StorefrontSite,
} from '../src/schemas/storefront';

// Elysia registers these formats when a schema module loads it; keep the test independent of that.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)));
if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v));
if (!FormatRegistry.Has('uri')) FormatRegistry.Set('uri', (v) => URL.canParse(v));

/** The schema of every example, by the same name (the type makes a missing one a compile error). */
const SCHEMAS: { [K in keyof Examples]: TSchema } = {
  Sandbox,
  KeyInfo,
  CreateClassBody,
  UpdateClassBody,
  Class,
  RescheduleBody,
  Occurrence,
  InviteMemberBody,
  UpdateMemberBody,
  Member,
  CreateInstructorBody,
  UpdateInstructorBody,
  Instructor,
  CreateLocationBody,
  UpdateLocationBody,
  Location,
  CreateRoomBody,
  UpdateRoomBody,
  Room,
  CreatePlanBody,
  UpdatePlanBody,
  Plan,
  CreateCouponBody,
  Coupon,
  CreateProgramBody,
  UpdateProgramBody,
  Program,
  UpdateContentBody,
  Video,
  Event,
  StorefrontConfig,
  StorefrontSite,
  StorefrontClassList,
  StorefrontInstructorList,
  StorefrontPlanList,
  StorefrontPolicies,
};

/** Records the Management API answers with (their `…Page` lists are derived from these). */
const RECORDS = [
  'Class',
  'Occurrence',
  'Member',
  'Instructor',
  'Location',
  'Room',
  'Plan',
  'Coupon',
  'Program',
  'Video',
  'Event',
  'Sandbox',
  'KeyInfo',
] as const;
/** Success responses of the Storefront API. */
const STOREFRONT_RESPONSES = [
  'StorefrontConfig',
  'StorefrontSite',
  'StorefrontClassList',
  'StorefrontInstructorList',
  'StorefrontPlanList',
  'StorefrontPolicies',
] as const;

const MODULES = {
  classes: classesModule,
  content: contentModule,
  coupons: couponsModule,
  instructors: instructorsModule,
  locations: locationsModule,
  members: membersModule,
  plans: plansModule,
  programs: programsModule,
  schedule: scheduleModule,
  storefront: storefrontModule,
  events: eventsModule,
  sandboxes: { Sandbox, SandboxSeed },
  keys: { KeyInfo },
};
const isSchema = (v: unknown): v is TSchema =>
  !!v && typeof v === 'object' && Object.getOwnPropertySymbols(v).length > 0;
const EXPORTED = Object.values(MODULES).flatMap((m) =>
  Object.entries(m)
    .filter(([, v]) => isSchema(v))
    .map(([name]) => name),
);

const examples = EXAMPLES as Record<string, unknown>;
const NAMES = Object.keys(SCHEMAS) as (keyof Examples)[];

/** Every way `value` fails `schema`, one line each. */
const errorsOf = (schema: TSchema, value: unknown) =>
  [...Value.Errors(schema, value)].map((e) => `${e.path || '/'}: ${e.message} (got ${JSON.stringify(e.value)})`);

/** Every (path, key, value) below `v`. */
function* walk(v: unknown, path = ''): Generator<[string, string, unknown]> {
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) yield* walk(x, `${path}/${i}`);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      yield [`${path}/${k}`, k, x];
      yield* walk(x, `${path}/${k}`);
    }
  }
}

const PREFIX: Record<(typeof RECORDS)[number], string> = {
  Class: 'cls',
  Occurrence: 'occ',
  Member: 'mem',
  Instructor: 'ins',
  Location: 'loc',
  Room: 'room',
  Plan: 'pln',
  Coupon: 'cpn',
  Program: 'prg',
  Video: 'vid',
  Event: 'evt',
  Sandbox: 'std',
  KeyInfo: 'key',
};
const ID_RE = /^(cls|occ|ins|mem|pln|cpn|prg|loc|room|vid|std|evt|key)_[0-9A-Za-z]{22}$/;
const UTC_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('examples', () => {
  test.each(NAMES)('%s passes its schema', (name) => {
    const errors = errorsOf(SCHEMAS[name], examples[name]);
    if (errors.length) console.error(`${name}:\n  ${errors.join('\n  ')}`);
    expect(errors).toEqual([]);
    expect(Value.Check(SCHEMAS[name], examples[name])).toBe(true);
  });

  test.each(NAMES)('%s has no field its schema does not declare', (name) => {
    // Records do not forbid unknown fields, so `Value.Check` alone would let a stray one through.
    const example = examples[name];
    expect(Value.Clean(SCHEMAS[name], structuredClone(example))).toEqual(example as never);
  });

  test('every body, record and storefront response schema has an example, and only those', () => {
    const bodies = EXPORTED.filter((n) => n.endsWith('Body'));
    const pages = EXPORTED.filter((n) => n.endsWith('Page')).map((n) => n.slice(0, -'Page'.length));
    expect(bodies.length).toBeGreaterThan(0);
    const wanted = [...new Set([...bodies, ...pages, ...RECORDS, ...STOREFRONT_RESPONSES])].sort();
    for (const n of wanted) expect(EXPORTED).toContain(n);
    expect(Object.keys(EXAMPLES).sort()).toEqual(wanted);
    // `…Page` examples are derived (`{ data: [record], next_cursor: null }`), never written.
    expect(Object.keys(EXAMPLES).filter((n) => n.endsWith('Page'))).toEqual([]);
  });

  test('the schema table matches the exports of the same name', () => {
    const byName = Object.assign({}, ...Object.values(MODULES)) as Record<string, unknown>;
    for (const name of NAMES) expect(byName[name]).toBe(SCHEMAS[name]);
  });

  test('ids are prefixed, 22 base62 characters, of the right kind, and refer to other examples', () => {
    for (const r of RECORDS) expect((examples[r] as { id: string }).id.startsWith(`${PREFIX[r]}_`)).toBe(true);
    const ids = new Set<string>();
    const refs: [string, string][] = [];
    for (const name of NAMES) {
      for (const [path, key, v] of walk(examples[name])) {
        const where = `${name}${path}`;
        if (key === 'id') {
          expect({ where, v, ok: typeof v === 'string' && ID_RE.test(v) }).toEqual({ where, v, ok: true });
          ids.add(v as string);
        } else if (key === 'requestId') {
          expect({ where, v, ok: typeof v === 'string' && /^req_[0-9a-z]+$/.test(v) }).toEqual({ where, v, ok: true });
        } else if (key.endsWith('Id') && v !== null) {
          expect({ where, v, ok: typeof v === 'string' && ID_RE.test(v) }).toEqual({ where, v, ok: true });
          refs.push([where, v as string]);
        } else if (key.endsWith('Ids')) {
          for (const x of v as string[]) {
            expect({ where, x, ok: ID_RE.test(x) }).toEqual({ where, x, ok: true });
            refs.push([where, x]);
          }
        }
      }
    }
    for (const [where, id] of refs) expect({ where, id, known: ids.has(id) }).toEqual({ where, id, known: true });
    // the same kind of record carries the same id wherever it appears
    const byPrefix = new Map<string, Set<string>>();
    for (const id of [...ids, ...refs.map(([, id]) => id)]) {
      const p = id.slice(0, id.indexOf('_'));
      (byPrefix.get(p) ?? byPrefix.set(p, new Set()).get(p)!).add(id);
    }
    // a sandbox is a studio of its own: the studio and its sandbox are the two studio ids
    for (const [p, set] of byPrefix)
      expect({ p, ids: [...set] }).toEqual({ p, ids: [...set].slice(0, p === 'std' ? 2 : 1) });
  });

  test('timestamps are ISO 8601 UTC with milliseconds, in 2026–27, and records are updated after creation', () => {
    for (const name of NAMES) {
      for (const [path, key, v] of walk(examples[name])) {
        if (!key.endsWith('At') || v === null) continue;
        const where = `${name}${path}`;
        const ok = typeof v === 'string' && UTC_MS_RE.test(v) && new Date(v).toISOString() === v && /^202[67]-/.test(v);
        expect({ where, v, ok }).toEqual({ where, v, ok: true });
      }
      const r = (examples[name] ?? {}) as { createdAt?: string; updatedAt?: string };
      if (r.createdAt && r.updatedAt) expect(r.updatedAt >= r.createdAt).toBe(true);
    }
    // what the API requires in the future is after every record's creation
    const created = NAMES.map((n) => (examples[n] as { createdAt?: string } | undefined)?.createdAt)
      .filter((x): x is string => !!x)
      .sort();
    const latest = created.at(-1)!;
    for (const future of [
      EXAMPLES.CreateClassBody.startsAt,
      EXAMPLES.RescheduleBody.startsAt,
      EXAMPLES.CreateCouponBody.expiresAt,
    ]) {
      expect(future > latest).toBe(true);
    }
  });

  test('configs that the schemas leave open pass the checks the services make', () => {
    const planConfig = (type: keyof typeof PLAN_CONFIGS, config: unknown, where: string) => {
      const errors = errorsOf(PLAN_CONFIGS[type], config);
      if (errors.length) console.error(`${where}:\n  ${errors.join('\n  ')}`);
      expect(errors).toEqual([]);
    };
    planConfig(EXAMPLES.CreatePlanBody.type, EXAMPLES.CreatePlanBody.config, 'CreatePlanBody.config');
    planConfig(
      EXAMPLES.Plan.type,
      EXAMPLES.UpdatePlanBody.config,
      'UpdatePlanBody.config (a PATCH of the Plan example)',
    );
    planConfig(EXAMPLES.Plan.type, EXAMPLES.Plan.config, 'Plan.config');
    for (const p of EXAMPLES.StorefrontPlanList.plans)
      planConfig(p.type, p.config, 'StorefrontPlanList.plans[].config');
    expect(errorsOf(CouponConfig, EXAMPLES.CreateCouponBody.config)).toEqual([]);

    for (const c of [EXAMPLES.Plan.config.currency, EXAMPLES.StorefrontConfig.currency, EXAMPLES.Program.currency]) {
      expect(isCurrency(c!)).toBe(true);
    }
    // a paid program has a positive price and a currency (else 422 invalid_price)
    for (const p of [EXAMPLES.CreateProgramBody, EXAMPLES.Program]) {
      expect(p.pricing).toBe('paid');
      expect(p.priceCents).toBeGreaterThan(0);
      expect(p.currency).toBe('EUR');
    }
    // the class runs in a mode the studio has enabled
    expect(EXAMPLES.StorefrontConfig.enabledModes as string[]).toContain(EXAMPLES.CreateClassBody.mode);
  });
});
