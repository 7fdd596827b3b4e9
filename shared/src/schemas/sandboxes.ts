import { type Static, Type as t } from '@sinclair/typebox';
import { IdOut, Timestamp } from './fields';

/** What a sandbox's seed made: the demo studio's records, counted (docs/design/test-mode.md). */
export const SandboxSeed = t.Object(
  {
    instructors: t.Integer({ minimum: 0 }),
    locations: t.Integer({ minimum: 0 }),
    rooms: t.Integer({ minimum: 0 }),
    plans: t.Integer({ minimum: 0 }),
    classes: t.Integer({ minimum: 0 }),
    occurrences: t.Integer({ minimum: 0 }),
    members: t.Integer({ minimum: 0 }),
    coupons: t.Integer({ minimum: 0 }),
    programs: t.Integer({ minimum: 0 }),
    videos: t.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** A sandbox: a studio of its own, linked to its live studio, reached only by test keys. */
export type SandboxSeed = Static<typeof SandboxSeed>;

export const Sandbox = t.Object({
  id: IdOut('std_…: the sandbox is a studio of its own'),
  name: t.String({ maxLength: 40, description: '`default`, or the name it was given (for example `ci`)' }),
  liveStudioId: IdOut('std_…: the live studio it belongs to'),
  studioName: t.String({ maxLength: 120, description: 'The live studio\'s name with " (test)"' }),
  resetAt: Timestamp,
  seeded: SandboxSeed,
});
export type Sandbox = Static<typeof Sandbox>;
