#!/usr/bin/env bun
/**
 * `bun run bench:profile <file.cpuprofile | dir>`: where a CPU profile's samples fall, by function, counted.
 *
 * `bun run bench --profile dir <case>` makes the case's gateway write its profile in both of Bun's forms. The markdown one
 * (`--cpu-prof-md`) weighs each sample by the time since the one before, so the gaps in which the gateway sat
 * idle (while a bench loads its other targets) land on whichever function ran next: in one hop run a timer's
 * setter and a stream's write came out at 15 % each. Counting samples instead says where the CPU went while
 * there was work. Prints each function's share of the samples it was running (self), then the same by
 * where the code lives.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: Node[];
  samples: number[];
  startTime: number;
  endTime: number;
}

const TOP = Number(process.env.PROFILE_TOP ?? 40);
const root = join(import.meta.dir, '..', '..');

const arg = process.argv[2];
if (!arg) {
  console.error('usage: bun run bench:profile <file.cpuprofile | directory holding one>');
  process.exit(2);
}
const file = statSync(arg).isDirectory()
  ? join(
      arg,
      readdirSync(arg)
        .filter((f) => f.endsWith('.cpuprofile'))
        .sort()
        .at(-1) ?? '',
    )
  : arg;
if (!file.endsWith('.cpuprofile')) {
  console.error(`no .cpuprofile in ${arg}`);
  process.exit(2);
}

const profile = (await Bun.file(file).json()) as Profile;
const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));

/** A frame's file as a path (`file://` dropped): the runtime's own code keeps its `node:` or `internal:` name. */
const pathOf = (url: string) => url.replace(/^file:\/\//, '');

/** Where a frame's code lives: ours (by path), a dependency, the runtime's JavaScript, or native code. */
function placeOf(url: string): string {
  if (!url) return 'native code';
  const path = pathOf(url);
  if (path.includes('/node_modules/'))
    return `dependency ${/node_modules\/(?:\.bun\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? ''}`;
  if (!path.startsWith('/')) return `runtime ${path.split(':')[0]}`;
  return relative(root, path).split('/').slice(0, 2).join('/');
}

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
for (const id of profile.samples) {
  const f = frames.get(id)!;
  const name = `${f.functionName || '(anonymous)'} ${f.url ? `${relative(root, pathOf(f.url))}:${f.lineNumber + 1}` : '[native]'}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + 1);
  const place = placeOf(f.url);
  byPlace.set(place, (byPlace.get(place) ?? 0) + 1);
}

const total = profile.samples.length;
const pct = (n: number) => `${((100 * n) / total).toFixed(1).padStart(5)} %`;
const rows = (m: Map<string, number>, top: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, n]) => `| ${pct(n)} | ${String(n).padStart(6)} | ${k} |`)
    .join('\n');

console.log(
  `${relative(process.cwd(), file)}: ${total} samples over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s\n`,
);
console.log(`| self | samples | function |\n|---:|---:|---|\n${rows(byFunction, TOP)}\n`);
console.log(`| self | samples | where |\n|---:|---:|---|\n${rows(byPlace, 20)}`);
