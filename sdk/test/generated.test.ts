/**
 * The SDK is kept in step with the registry (conventions 19): the committed src/generated/ is what the generator
 * writes from today's documents, every operation of both surfaces has its method, and the package's code imports
 * nothing of ours at run time (it ships alone: its one dependency is standardwebhooks).
 */
import { expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { methodOf, operationsOf, type Surface } from '@studio/shared';
import ts from 'typescript';
import { GENERATED_DIR, generate } from '../scripts/generate';
import { MANAGEMENT, STOREFRONT } from '../src/generated/operations';

test('src/generated/ is what the generator writes from the registry now (run `bun run generate` in sdk/ if not)', async () => {
  const now = await generate();
  expect(readdirSync(GENERATED_DIR).sort()).toEqual(Object.keys(now).sort());
  for (const [name, text] of Object.entries(now)) {
    const committed = readFileSync(join(GENERATED_DIR, name), 'utf8');
    if (committed !== text)
      throw new Error(`sdk/src/generated/${name} differs from the registry: run bun run generate in sdk/`);
  }
});

test('every operation of each surface is a method of the client, at the place its name says, and no method is not one', () => {
  const tables: Record<Surface, object> = { management: MANAGEMENT, storefront: STOREFRONT };
  for (const surface of ['management', 'storefront'] as const) {
    const leaves: string[] = [];
    const walk = (t: object, at: string[]) => {
      for (const [k, v] of Object.entries(t)) Array.isArray(v) ? leaves.push(`${v[0]} ${v[1]}`) : walk(v, [...at, k]);
    };
    walk(tables[surface], []);
    const ops = operationsOf(surface);
    expect(leaves.sort()).toEqual(ops.map((o) => `${o.method} ${o.path}`).sort());
    for (const o of ops) {
      const { resource, name } = methodOf(o);
      let node: any = tables[surface];
      for (const r of resource) node = node[r.replace(/[-_](\w)/g, (_, c: string) => c.toUpperCase())];
      expect(`${o.id}: ${node?.[name]?.[1]}`).toBe(`${o.id}: ${o.path}`);
    }
  }
  // the names the README promises
  expect(MANAGEMENT.classes.cancel[0]).toBe('DELETE');
  expect(MANAGEMENT.schedule.reschedule[1]).toBe('/v1/schedule/{occurrenceId}');
  expect(MANAGEMENT.locations.rooms.create[1]).toBe('/v1/locations/{locationId}/rooms');
  expect(MANAGEMENT.members.cancel[1]).toBe('/v1/members/{membershipId}/cancel');
  expect(MANAGEMENT.sandbox.reset[1]).toBe('/v1/sandbox/reset');
  expect(MANAGEMENT.key.retrieve[1]).toBe('/v1/key');
});

test("the package's code imports only its own files and standardwebhooks", () => {
  const src = join(import.meta.dir, '../src');
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const foreign = files.flatMap((f) =>
    ts
      .preProcessFile(readFileSync(join(src, f), 'utf8'), true, true)
      .importedFiles.map((i) => i.fileName)
      .filter((spec) => !spec.startsWith('./') && !spec.startsWith('../') && spec !== 'standardwebhooks')
      .map((spec) => `${f} imports ${spec}`),
  );
  expect(foreign).toEqual([]);
});
