/**
 * The import graph of every workspace's `src/` (shared, gateway, both services), read from the files:
 * no import circles, and in a service no resource folder reaching into another
 * (`<service>/src/<resource>/` may import its own folder, `kit/` and packages only).
 *
 * Every import counts, `import type` included: a circle of types is still a circle a reader has to
 * untangle, and it becomes a runtime one the day a type import turns into a value import.
 * Relative specifiers and `@studio/*` workspace packages (through their `exports`) are resolved;
 * other packages are leaves.
 *
 * And the workspaces' surfaces (docs/design/workspaces.md): no `exports` pattern (`./*`), and no production file
 * (a workspace's `src/`, `scripts/`) imports `@studio/x/sub` that `x` does not declare, nor reaches into another
 * workspace by relative path. Tests may reach internals by relative path; they test them. And their order: a
 * workspace's production code imports only the workspaces (or the one entry point) `MAY_IMPORT` gives it.
 */
import { describe, expect, test } from 'bun:test';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dir, '..');

type Graph = Map<string, string[]>;
interface Workspace {
  name: string;
  dir: string;
  exports: Record<string, string>;
  /** Its entry points are what `bun run build` writes (dist/, not committed): `@studio/sdk`. */
  built?: boolean;
}

function workspacesOf(root: string): Workspace[] {
  const dirs = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces ?? []) as string[];
  return dirs.map((d) => {
    const pkg = JSON.parse(readFileSync(join(root, d, 'package.json'), 'utf8'));
    const declared = typeof pkg.exports === 'string' ? { '.': pkg.exports } : (pkg.exports ?? {});
    // a published package's entry points name conditions (`types`, `import`): its code is what `import` names
    const exports = Object.fromEntries(
      Object.entries<string | Record<string, string>>(declared).map(([k, v]) => [
        k,
        typeof v === 'string' ? v : (v.import ?? v.default ?? ''),
      ]),
    );
    return { name: pkg.name as string, dir: join(root, d), exports, built: !!pkg.scripts?.build };
  });
}

const SOURCE = /\.(?:ts|tsx|mts|js|mjs)$/;
const sourcesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourcesUnder(path);
    return SOURCE.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });

const isFile = (p: string) => existsSync(p) && statSync(p).isFile();
function resolveFile(base: string): string | null {
  // `./core.js` names `core.ts`, as TypeScript resolves it (the SDK's code writes what its built files will import)
  const ts = base.endsWith('.js') ? [`${base.slice(0, -3)}.ts`] : [];
  for (const p of [base, ...ts, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')])
    if (isFile(p)) return p;
  return null;
}

/** `@studio/x` or `@studio/x/sub` through the package's `exports` (`.` and `./*` patterns); null for anything else. */
function resolvePackage(spec: string, workspaces: Workspace[]): string | null {
  const ws = workspaces.find((w) => spec === w.name || spec.startsWith(`${w.name}/`));
  if (!ws) return null;
  const sub = `.${spec.slice(ws.name.length)}`;
  for (const [pattern, target] of Object.entries(ws.exports)) {
    // a built entry point (`@studio/sdk`'s dist/) is its source where the repository runs it: tsconfig.json's `paths`
    if (pattern === sub && ws.built && target.startsWith('./dist/'))
      return resolveFile(join(ws.dir, target.replace('./dist/', './src/').replace(/\.js$/, '.ts')));
    if (pattern === sub) return resolveFile(join(ws.dir, target));
    const star = pattern.indexOf('*');
    if (star >= 0 && sub.startsWith(pattern.slice(0, star)) && sub.endsWith(pattern.slice(star + 1))) {
      const matched = sub.slice(star, sub.length - (pattern.length - star - 1));
      return resolveFile(join(ws.dir, target.replace('*', matched)));
    }
  }
  return null;
}

/**
 * The import graph reachable from every source file under `roots`: file -> the files it imports
 * (a file outside the roots is followed too, so a circle through it is still seen). `unresolved`
 * lists relative or workspace imports that name no file.
 */
function importGraph(roots: string[], workspaces: Workspace[] = []): { graph: Graph; unresolved: string[] } {
  const graph: Graph = new Map();
  const unresolved: string[] = [];
  const todo = roots.flatMap(sourcesUnder);
  while (todo.length) {
    const file = todo.pop()!;
    if (graph.has(file)) continue;
    const edges: string[] = [];
    graph.set(file, edges);
    if (!SOURCE.test(file)) continue;
    // the TypeScript scanner: sees `import type`, `export … from`, `import('…')`, and skips comments and strings
    for (const { fileName: spec } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const relativeSpec = spec.startsWith('./') || spec.startsWith('../');
      const target = relativeSpec ? resolveFile(resolve(dirname(file), spec)) : resolvePackage(spec, workspaces);
      if (target) {
        if (!edges.includes(target)) edges.push(target);
        if (!target.includes(`${sep}node_modules${sep}`)) todo.push(target);
      } else if (relativeSpec || spec.startsWith('@studio/'))
        unresolved.push(`${relative(ROOT, file)} imports '${spec}'`);
    }
  }
  return { graph, unresolved };
}

/** Strongly connected components with a circle in them (Tarjan), each with one shortest circle as an example. */
function importCycles(graph: Graph): { files: string[]; example: string[] }[] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) components.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((files) => ({ files, example: shortestCircle(graph, files[0]!, new Set(files)) }));
}

/** Breadth-first from `start` back to itself, inside its component. */
function shortestCircle(graph: Graph, start: string, within: Set<string>): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u)!) path.splice(1, 0, u);
        return [...path, start];
      }
      if (within.has(w) && !from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/**
 * In one service's `src/`: a file in a folder importing another folder (a resource may import only
 * itself, `kit/` and packages; `kit/` no resource), or a file in a folder importing a top-level file
 * (`app.ts`, `main.ts` compose the folders; nothing inside them imports back).
 */
function folderCrossings(graph: Graph, src: string): string[] {
  const folderOf = (file: string) => {
    const rel = relative(src, file);
    if (rel.startsWith('..')) return null; // outside this service: a package
    const parts = rel.split(sep);
    return parts.length > 1 ? parts[0]! : '';
  };
  const crossings: string[] = [];
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (!from) continue; // outside, or a top-level file
    for (const target of targets) {
      const to = folderOf(target);
      if (to === null || to === from || (to === 'kit' && from !== 'kit')) continue;
      // the one folder above the resources: a sandbox's seed writes them through their services' rules (test mode)
      if (from === 'sandboxes' && relative(src, target) === join(to, 'service.ts')) continue;
      crossings.push(`${relative(src, file)} imports ${relative(src, target)}`);
    }
  }
  return crossings.sort();
}

/** Every `exports` key or target of a workspace that is a pattern (`./*`): a surface nobody chose. */
const patternExports = (workspaces: Workspace[]): string[] =>
  workspaces.flatMap((w) =>
    Object.entries(w.exports)
      .filter(([key, target]) => key.includes('*') || target.includes('*'))
      .map(([key, target]) => `${w.name}: "${key}": "${target}"`),
  );

const isTest = (rel: string) => /(^|\/)test\//.test(rel) || /\.test\.tsx?$/.test(rel);

/**
 * In `files` (relative to `root`), each import of a workspace that is not one of its declared entry points
 * (`@studio/x` or `@studio/x/<key>`), and each relative import that lands in another workspace's directory than the
 * importer's own (a file outside every workspace, such as `scripts/`, may reach none).
 */
function surfaceBreaches(root: string, files: string[], workspaces: Workspace[]): string[] {
  const home = (abs: string) => workspaces.find((w) => abs.startsWith(w.dir + sep)) ?? null;
  return files.flatMap((rel) => {
    const abs = join(root, rel);
    const own = home(abs);
    return ts.preProcessFile(readFileSync(abs, 'utf8'), true, true).importedFiles.flatMap(({ fileName: spec }) => {
      if (spec.startsWith('./') || spec.startsWith('../')) {
        const into = home(resolve(dirname(abs), spec));
        return into && into !== own ? [`${rel} reaches into ${into.name} by '${spec}'`] : [];
      }
      const ws = workspaces.find((w) => spec === w.name || spec.startsWith(`${w.name}/`));
      if (!ws || `.${spec.slice(ws.name.length)}` in ws.exports || spec === ws.name) return [];
      return [`${rel} imports '${spec}', not an entry point of ${ws.name} (${Object.keys(ws.exports).join(', ')})`];
    });
  });
}

/**
 * The order of workspaces (docs/design/workspaces.md): the workspaces, or single entry points (`name/sub`), that each
 * workspace's production code may import; a name alone allows each of its entry points. No workspace imports the
 * gateway, a service or the dashboard, with one entry point excepted: the dashboard imports the Management service's
 * sandboxes, whose seed and reset are that service's records written with its rules (the dashboard does in-process
 * what the API's reset does).
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  '@studio/shared': [],
  '@studio/control': ['@studio/shared'],
  '@studio/gateway': ['@studio/shared'],
  '@studio/storefront-service': ['@studio/shared'],
  '@studio/management-service': ['@studio/shared'],
  '@studio/dashboard': ['@studio/shared', '@studio/control', '@studio/management-service/sandboxes'],
  // its build script only (sdk/scripts/generate.ts writes the types from the documents); the package's own code
  // imports no workspace, which sdk/test/generated.test.ts holds
  '@studio/sdk': ['@studio/shared'],
  // a client of the public API (docs/design/mcp.md): the registry for its tools, the SDK for its calls
  '@studio/mcp': ['@studio/shared', '@studio/sdk'],
};

/** In `files` (relative to `root`), each import of another workspace that its workspace may not make (`mayImport`). */
function orderBreaches(
  root: string,
  files: string[],
  workspaces: Workspace[],
  mayImport: Record<string, readonly string[]>,
): string[] {
  return files.flatMap((rel) => {
    const own = workspaces.find((w) => join(root, rel).startsWith(w.dir + sep));
    if (!own) return []; // scripts/: the CLI and the benches drive every workspace
    const allowed = mayImport[own.name] ?? [];
    return ts
      .preProcessFile(readFileSync(join(root, rel), 'utf8'), true, true)
      .importedFiles.flatMap(({ fileName: spec }) => {
        const ws = workspaces.find((w) => spec === w.name || spec.startsWith(`${w.name}/`));
        if (!ws || ws === own || allowed.includes(ws.name) || allowed.includes(spec)) return [];
        return [`${rel} imports '${spec}': ${own.name} may import ${allowed.join(', ') || 'no workspace'}`];
      });
  });
}

const workspaces = workspacesOf(ROOT);
const trees = workspaces.map((w) => join(w.dir, 'src')).filter((d) => existsSync(d));
const { graph, unresolved } = importGraph(trees, workspaces);
const show = (files: string[]) => files.map((f) => relative(ROOT, f)).join(' → ');

describe('imports', () => {
  test('the checks see every tree, and every relative or workspace import names a file', () => {
    expect(trees.map((t) => relative(ROOT, t))).toEqual(
      expect.arrayContaining([
        'shared/src',
        'control/src',
        'gateway/src',
        'dashboard/src',
        'storefront-service/src',
        'management-service/src',
      ]),
    );
    expect(unresolved).toEqual([]);
  });

  for (const tree of trees) {
    test(`no import circle in ${relative(ROOT, tree)}`, () => {
      const circles = importCycles(graph)
        .filter((c) => c.files.some((f) => f.startsWith(tree + sep)))
        .map(
          (c) =>
            `${c.files.length} files in one circle, e.g. ${show(c.example)} (all: ${c.files.map((f) => relative(ROOT, f)).join(', ')})`,
        );
      expect(circles).toEqual([]);
    });
  }

  for (const ws of workspaces.filter((w) => w.name.endsWith('-service'))) {
    test(`${relative(ROOT, ws.dir)}: a resource folder imports only itself, kit/ and packages`, () => {
      expect(folderCrossings(graph, join(ws.dir, 'src'))).toEqual([]);
    });
  }
});

describe("the workspaces' surfaces", () => {
  const production = Bun.spawnSync(['git', 'ls-files', '*.ts', '*.tsx', '*.js', '*.mjs'], { cwd: ROOT })
    .stdout.toString()
    .split('\n')
    .filter((f) => f && !isTest(f));

  test('every workspace declares its entry points, and no pattern', () => {
    expect(patternExports(workspaces)).toEqual([]);
    for (const w of workspaces) {
      expect(Object.keys(w.exports)).toContain('.');
      expect(Object.keys(w.exports).length).toBeLessThanOrEqual(4);
      for (const [key, target] of Object.entries(w.exports))
        expect(
          `${w.name} ${key}: ${resolveFile(join(w.dir, target)) || (w.built && target.startsWith('./dist/')) ? 'a file' : target}`,
        ).toBe(`${w.name} ${key}: a file`);
    }
  });

  test('production code (src/, scripts/, the benches, the CLI) imports other workspaces only through their entry points', () => {
    expect(production.filter((f) => f.startsWith('scripts/bench/')).length).toBeGreaterThan(10);
    expect(surfaceBreaches(ROOT, production, workspaces)).toEqual([]);
  });

  test('production code keeps the order of workspaces: each imports only what MAY_IMPORT gives it', () => {
    expect(workspaces.map((w) => w.name).sort()).toEqual(Object.keys(MAY_IMPORT).sort());
    expect(orderBreaches(ROOT, production, workspaces, MAY_IMPORT)).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const write = (dir: string, files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  };

  test('a circle (of type imports, through an index.ts) is found and shown; a chain is not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'imports-'));
    try {
      write(dir, {
        'src/app.ts': `import { handlers } from './things/routes';\nexport const app = handlers;\n`,
        'src/things/routes.ts': `import type { Deps } from '../app';\nimport { q } from './queries';\nexport const handlers = (d: Deps) => q;\n`,
        'src/things/queries.ts': `import { x } from '../kit';\nexport const q = x;\n`,
        'src/kit/index.ts': `/* import { app } from '../app' */\nexport const x = 1;\n`,
      });
      const { graph: g, unresolved: u } = importGraph([join(dir, 'src')]);
      expect(u).toEqual([]);
      const found = importCycles(g);
      expect(found.map((c) => c.example.map((f) => relative(dir, f)))).toEqual([
        ['src/app.ts', 'src/things/routes.ts', 'src/app.ts'],
      ]);
      expect(found[0]!.files.length).toBe(2); // kit/index.ts is imported, but in no circle (the comment is no import)
      expect(folderCrossings(g, join(dir, 'src'))).toEqual(['things/routes.ts imports app.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('one resource folder importing another is a crossing, even without a circle', () => {
    const dir = mkdtempSync(join(tmpdir(), 'imports-'));
    try {
      write(dir, {
        'src/a/service.ts': `export { y } from '../b/service.ts';\n`,
        'src/b/service.ts': `import { k } from '../kit/deps';\nexport const y = k;\n`,
        'src/kit/deps.ts': `export const k = 1;\n`,
      });
      const { graph: g } = importGraph([join(dir, 'src')]);
      expect(importCycles(g)).toEqual([]);
      expect(folderCrossings(g, join(dir, 'src'))).toEqual(['a/service.ts imports b/service.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a pattern export, an undeclared entry point and a relative reach into another workspace are found', () => {
    const dir = mkdtempSync(join(tmpdir(), 'imports-'));
    try {
      write(dir, {
        'lib/package.json': JSON.stringify({
          name: '@studio/lib',
          exports: { '.': './src/index.ts', './*': './src/*.ts' },
        }),
        'lib/src/index.ts': `export const a = 1;\n`,
        'lib/src/inner.ts': `export const b = 2;\n`,
        'app/package.json': JSON.stringify({ name: '@studio/app', exports: { '.': './src/app.ts' } }),
        'app/src/app.ts': `import { a } from '@studio/lib';\nimport { b } from '@studio/lib/inner';\nexport const c = a + b;\n`,
        'app/src/near.ts': `import { c } from './app';\nexport { b } from '../../lib/src/inner';\nexport const d = c;\n`,
        'app/test/app.test.ts': `export { b } from '../../lib/src/inner';\n`,
      });
      const ws = ['lib', 'app'].map((d) => {
        const pkg = JSON.parse(readFileSync(join(dir, d, 'package.json'), 'utf8'));
        return { name: pkg.name as string, dir: join(dir, d), exports: pkg.exports as Record<string, string> };
      });
      expect(patternExports(ws)).toEqual(['@studio/lib: "./*": "./src/*.ts"']);
      const files = ['app/src/app.ts', 'app/src/near.ts', 'app/test/app.test.ts'].filter((f) => !isTest(f));
      expect(surfaceBreaches(dir, files, ws)).toEqual([
        "app/src/app.ts imports '@studio/lib/inner', not an entry point of @studio/lib (., ./*)",
        "app/src/near.ts reaches into @studio/lib by '../../lib/src/inner'",
      ]);
      // one entry point allowed is not the workspace: its `.` and its other entry points are still out of order
      expect(orderBreaches(dir, files, ws, { '@studio/app': ['@studio/lib/inner'] })).toEqual([
        "app/src/app.ts imports '@studio/lib': @studio/app may import @studio/lib/inner",
      ]);
      expect(orderBreaches(dir, files, ws, { '@studio/app': ['@studio/lib'] })).toEqual([]);
      expect(orderBreaches(dir, ['lib/src/index.ts'], ws, {})).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Nothing reaches into the runtime's internals (docs/design/serving.md): `process.binding`, Node's `internalBinding`
 * and `_linkedBinding` are no API Bun promises to keep, and the one server built on them owned its smuggling bugs.
 */
const INTERNALS = /(?:\.\s*|\[\s*['"`])(?:binding|_linkedBinding)['"`]?\s*\]?\s*\(\s*['"`]|\binternalBinding\s*\(/;

describe("the runtime's internals", () => {
  const tracked = Bun.spawnSync(['git', 'ls-files', '*.ts', '*.tsx', '*.js', '*.mjs'], { cwd: ROOT })
    .stdout.toString()
    .split('\n')
    .filter(Boolean);

  test('no source file, test, script or bench calls process.binding or internalBinding', () => {
    expect(tracked.length).toBeGreaterThan(100);
    // this file names them in its pattern, not in a call
    const using = tracked.filter(
      (f) => f !== 'test/imports.test.ts' && INTERNALS.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(using).toEqual([]);
  });

  test('the pattern finds each way of reaching them', () => {
    for (const call of [
      "process.binding('http_parser')",
      'process["binding"]("x")',
      'process._linkedBinding("x")',
      "internalBinding('fs')",
    ])
      expect(INTERNALS.test(call)).toBe(true);
    expect(INTERNALS.test('server.requestIP(req)')).toBe(false);
  });
});
