/**
 * The package as it ships (docs/design/sdk.md): `bun run build` makes it, `npm pack` holds only dist/, the README,
 * the licence and package.json, and the packed files import and run against a stack under Node 20, under Deno
 * (when `deno` is on the PATH: `npm i -g deno`), and in headless Chromium with a publishable key, whose page sends
 * only headers the Storefront's CORS allows.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDefaultSandbox } from '@studio/management-service/sandboxes';
import { SCOPES } from '@studio/shared';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../test/browser';
import { type Stack, startStack } from '../../test/harness';
import { needs } from '../../test/needs';
import pkg from '../package.json';

const SDK = join(import.meta.dir, '..');
const ROOT = join(SDK, '..');
let s: Stack;
let dir: string;
let studioId: string;
let secret: string;

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}) {
  const p = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio({ name: 'Packed' })).id;
  secret = (await s.key(studioId, 'secret', SCOPES)).key;
  dir = await mkdtemp(join(tmpdir(), 'sdk-package-'));
  const built = await run(['bun', 'run', 'build'], SDK);
  if (built.code !== 0) throw new Error(built.out + built.err);
  // a consumer's project: the packed files in node_modules/@studio/sdk, and its one dependency
  const packed = await run(['npm', 'pack', '--json', '--pack-destination', dir], SDK);
  if (packed.code !== 0) throw new Error(packed.err);
  const [{ filename }] = JSON.parse(packed.out);
  await mkdir(join(dir, 'node_modules/@studio/sdk'), { recursive: true });
  const untar = await run(
    ['tar', 'xzf', join(dir, filename), '-C', join(dir, 'node_modules/@studio/sdk'), '--strip-components=1'],
    dir,
  );
  if (untar.code !== 0) throw new Error(untar.err);
  await symlink(join(ROOT, 'node_modules/standardwebhooks'), join(dir, 'node_modules/standardwebhooks'));
  await Bun.write(
    join(dir, 'package.json'),
    JSON.stringify({ type: 'module', dependencies: { '@studio/sdk': pkg.version, standardwebhooks: '1.1.1' } }),
  );
}, 120_000);
afterAll(async () => {
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('npm pack lists only dist/, the README, the licence and package.json; the version is the one the SDK names', async () => {
  const r = await run(['npm', 'pack', '--dry-run', '--json'], SDK);
  const files: string[] = JSON.parse(r.out)[0].files.map((f: { path: string }) => f.path);
  expect(files.filter((f) => !f.startsWith('dist/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json']);
  expect(files).toContain('dist/index.js');
  expect(files).toContain('dist/index.d.ts');
  expect(files).toContain('dist/generated/management.d.ts');
  const { VERSION } = await import('../src/version');
  expect(VERSION).toBe(pkg.version);
  expect(Object.keys(pkg.dependencies)).toEqual(['standardwebhooks']);
  // the built module imports nothing but its dependency
  const js = await Bun.file(join(SDK, 'dist/index.js')).text();
  expect([...js.matchAll(/^import .* from "([^"]+)";?$/gm)].map((m) => m[1])).toEqual(['standardwebhooks']);
});

/** A consumer's script: a write, a read back, every page of a list, and a typed error. */
const SCRIPT = `import { Studio, NotFoundError, VERSION } from '@studio/sdk';
const [baseUrl, apiKey] = [process.argv[2] ?? Deno.args[0], process.argv[3] ?? Deno.args[1]];
const studio = new Studio({ apiKey, baseUrl });
const made = await studio.instructors.create({ name: 'Packed ' + VERSION });
const again = await studio.instructors.retrieve(made.id);
let n = 0;
for await (const _ of studio.instructors.list({ limit: 1 })) n++;
const missing = await studio.classes.retrieve('cls_0000000000000000000000').catch((e) => e);
console.log(JSON.stringify({ same: again.id === made.id, n, notFound: missing instanceof NotFoundError, code: missing.code }));
`;

test('the packed module imports and runs under Node 20', async () => {
  await Bun.write(join(dir, 'node.mjs'), SCRIPT.replace(' ?? Deno.args[0]', '').replace(' ?? Deno.args[1]', ''));
  const version = await run(['/usr/bin/node', '--version'], dir);
  expect(version.out).toMatch(/^v2\d\./);
  const r = await run(['/usr/bin/node', 'node.mjs', s.managementUrl, secret], dir);
  if (r.code !== 0) throw new Error(r.err);
  expect(JSON.parse(r.out)).toEqual({ same: true, n: 1, notFound: true, code: 'not_found' });
}, 30_000);

needs('deno').test(
  'the packed module imports and runs under Deno',
  async () => {
    await Bun.write(
      join(dir, 'deno.mjs'),
      SCRIPT.replace('process.argv[2] ?? ', '').replace('process.argv[3] ?? ', ''),
    );
    const r = await run(
      ['deno', 'run', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', 'deno.mjs', s.managementUrl, secret],
      dir,
      {
        DENO_NO_UPDATE_CHECK: '1',
      },
    );
    if (r.code !== 0) throw new Error(r.err);
    expect(JSON.parse(r.out)).toMatchObject({ same: true, notFound: true, code: 'not_found' });
  },
  60_000,
);

test("a page in headless Chromium imports the packed module and lists a studio's classes with a publishable key", async () => {
  const { sandbox } = await ensureDefaultSandbox(s.sql, studioId);
  const pk = (await s.key(sandbox.id, 'publishable')).key;
  // the dependency as the page's import map names it (a bundler does this for a real site)
  const entry = join(dir, 'vendor-entry.js');
  await Bun.write(entry, `export { Webhook, WebhookVerificationError } from 'standardwebhooks';\n`);
  const vendor = await Bun.build({ entrypoints: [entry], target: 'browser', format: 'esm' });
  const vendorJs = await vendor.outputs[0]!.text();
  const sdkJs = await Bun.file(join(dir, 'node_modules/@studio/sdk/dist/index.js')).text();
  const page = `<!doctype html><meta charset="utf-8"><title>classes</title>
<script type="importmap">{ "imports": { "standardwebhooks": "/vendor/standardwebhooks.js" } }</script>
<script type="module">
  import { Studio } from '/sdk/index.js';
  const studio = new Studio({ apiKey: ${JSON.stringify(pk)}, baseUrl: ${JSON.stringify(s.storefrontUrl)} });
  try {
    const { classes } = await studio.classes.list();
    window.result = { count: classes.length, titles: [...new Set(classes.map((c) => c.title))] };
  } catch (e) {
    window.result = { error: String(e) };
  }
</script>`;
  const site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const js = { 'content-type': 'text/javascript' };
      if (path === '/sdk/index.js') return new Response(sdkJs, { headers: js });
      if (path === '/vendor/standardwebhooks.js') return new Response(vendorJs, { headers: js });
      return new Response(page, { headers: { 'content-type': 'text/html' } });
    },
  });
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const context = await browser.newContext();
    const sent: Record<string, string>[] = [];
    const errors: string[] = [];
    const tab = await context.newPage();
    tab.on('pageerror', (e) => errors.push(String(e)));
    tab.on('request', (r) => {
      if (r.url().startsWith(s.storefrontUrl) && r.method() === 'GET') sent.push(r.headers());
    });
    await tab.goto(`http://127.0.0.1:${site.port}/`);
    await tab.waitForFunction(() => (window as any).result !== undefined, undefined, { timeout: 15_000 });
    const result = await tab.evaluate(() => (window as any).result);
    expect(errors).toEqual([]);
    expect(result.error).toBeUndefined();
    expect(result.count).toBeGreaterThan(0);
    expect(sent).toHaveLength(1);
    // a page sends what CORS allows: its key, and no User-Agent or Idempotency-Key of ours
    const extra = Object.keys(sent[0]!).filter(
      (h) => !['accept', 'referer', 'user-agent', 'sec-ch-ua', 'sec-ch-ua-mobile', 'sec-ch-ua-platform'].includes(h),
    );
    expect(extra).toEqual(['authorization']);
    expect(sent[0]!['user-agent']).not.toContain('studio-sdk');
    await context.close();
  } finally {
    await browser?.close();
    site.stop(true);
  }
}, 90_000);
