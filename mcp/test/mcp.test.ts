/**
 * The MCP server against a running stack (real gateway, services, Postgres and Redis; docs/design/mcp.md), driven by
 * the MCP project's own client over Streamable HTTP (the server in-process on a free port) and over stdio (the bin
 * spawned): the tools a key sees are its scopes', calls go through the gateway under the agent's key and address,
 * a retried create acts once, problems come back as tool errors, lists page.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ensureDefaultSandbox } from '@studio/management-service/sandboxes';
import { operationsOf, SCOPES, scopesOfMode } from '@studio/shared';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { type Stack, startStack } from '../../test/harness';
import { serveMcp } from '../src/serve';
import { toolsOf } from '../src/tools';
import { MCP_VERSION } from '../src/version';

let s: Stack;
let mcp: ReturnType<typeof serveMcp>;
let studioId: string;
let secret: string;
const ALLOWED = 'https://assistant.example';

beforeAll(async () => {
  // the MCP server calls from 127.0.0.1: the gateway believes its X-Forwarded-For, as `bun run start` sets it up
  s = await startStack({ env: { TRUSTED_PROXIES: '127.0.0.1' } });
  mcp = serveMcp(
    {
      HOST: '127.0.0.1',
      STOREFRONT_PUBLIC_URL: s.storefrontUrl,
      MANAGEMENT_PUBLIC_URL: s.managementUrl,
      MCP_ALLOWED_ORIGINS: ALLOWED,
    },
    { hostname: '127.0.0.1', port: 0 },
  );
  studioId = (await s.studio({ name: 'MCP Studio' })).id;
  secret = (await s.key(studioId, 'secret', SCOPES, 'agent')).key;
});
afterAll(async () => {
  mcp?.stop();
  await s?.close();
});

async function connect(key: string, o: { toolsets?: string; headers?: Record<string, string>; name?: string } = {}) {
  const client = new Client({ name: o.name ?? 'mcp-test', version: '9.9.9' });
  const url = new URL(`${mcp.url}/mcp${o.toolsets ? `?toolsets=${o.toolsets}` : ''}`);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${key}`, ...o.headers } },
    }),
  );
  return client;
}

type Text = { type: string; text: string }[];
const problemOf = (result: unknown) => {
  const r = result as { content?: unknown; isError?: boolean };
  expect(r.isError).toBe(true);
  return JSON.parse((r.content as Text)[0]!.text) as { status: number; code: string; errors?: { path: string }[] };
};
const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();

describe('tools from the registry', () => {
  test('every registry operation has exactly one tool, named once per surface', () => {
    for (const surface of ['management', 'storefront'] as const) {
      const tools = toolsOf(surface);
      expect(tools.map((t) => t.operation.id)).toEqual(operationsOf(surface).map((o) => o.id));
      expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
      for (const t of tools) expect(t.name).toMatch(/^[a-z]+(_[a-z]+)+$/);
    }
    expect(toolsOf('management').map((t) => t.name)).toContain('schedule_reschedule');
    expect(toolsOf('management').map((t) => t.name)).toContain('sandbox_reset');
  });

  test('docs/mcp.md lists every tool of each surface', async () => {
    const page = await Bun.file(join(import.meta.dir, '../../docs/mcp.md')).text();
    const [management, storefront] = page.split('### Storefront') as [string, string];
    const row = (name: string) => new RegExp(`^\\| \`${name}\` +\\|`, 'm');
    for (const t of toolsOf('management')) expect(management).toMatch(row(t.name));
    for (const t of toolsOf('storefront')) expect(storefront).toMatch(row(t.name));
  });

  test('every input and output schema is valid JSON Schema, and every example (arguments and answer) fits its tool', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true, strictRequired: false });
    addFormats(ajv);
    for (const surface of ['management', 'storefront'] as const)
      for (const t of toolsOf(surface)) {
        const input = ajv.compile(t.inputSchema);
        const output = ajv.compile(t.outputSchema);
        if (!output(t.outputExample)) throw new Error(`${t.name}'s answer: ${ajv.errorsText(output.errors)}`);
        expect(t.inputSchema.type).toBe('object');
        expect(t.outputSchema.type).toBe('object');
        if (!input(t.example)) throw new Error(`${t.name}: ${ajv.errorsText(input.errors)}`);
        expect(typeof t.annotations.readOnlyHint).toBe('boolean');
        expect(t.annotations.readOnlyHint).toBe(t.operation.method === 'GET');
        if (/^(cancel|archive|delete|reset)$/.test(t.method)) expect(t.annotations.destructiveHint).toBe(true);
      }
  });
});

describe('what a key sees', () => {
  test('a key holding only classes:read sees the read tools of classes and key_retrieve; another tool is refused', async () => {
    const key = (await s.key(studioId, 'secret', ['classes:read'])).key;
    const c = await connect(key);
    // the events feed needs any read scope and shows only the events of what the key may read (class.* here)
    expect(await names(c)).toEqual([
      'classes_list',
      'classes_retrieve',
      'events_list',
      'events_retrieve',
      'key_retrieve',
    ]);
    for (const t of (await c.listTools()).tools) expect(t.annotations?.readOnlyHint).toBe(true);
    await expect(c.callTool({ name: 'classes_create', arguments: {} })).rejects.toThrow(/Unknown tool: classes_create/);
    await expect(c.callTool({ name: 'instructors_list', arguments: {} })).rejects.toThrow(/Unknown tool/);
    const me = await c.callTool({ name: 'key_retrieve', arguments: {} });
    expect((me.structuredContent as { scopes: string[] }).scopes).toEqual(['classes:read']);
    await c.close();
  });

  test('a publishable key sees the Storefront tools only, each read-only', async () => {
    const key = (await s.key(studioId, 'publishable')).key;
    const c = await connect(key);
    expect(await names(c)).toEqual(
      toolsOf('storefront')
        .map((t) => t.name)
        .sort(),
    );
    expect(c.getInstructions()).toContain('Storefront only');
    const plans = await c.callTool({ name: 'plans_list', arguments: {} });
    expect(plans.isError).toBeFalsy();
    await c.close();
  });

  test('toolsets narrow the list; key_retrieve stays', async () => {
    const c = await connect(secret, { toolsets: 'classes,schedule' });
    const listed = await names(c);
    expect(listed).toContain('schedule_reschedule');
    expect(listed).toContain('key_retrieve');
    expect(listed.filter((n) => !/^(classes|schedule|key)_/.test(n))).toEqual([]);
    await c.close();
  });

  test("a test key's calls touch only its sandbox, and the instructions say test mode", async () => {
    const { sandbox } = await ensureDefaultSandbox(s.sql, studioId);
    const key = (await s.key(sandbox.id, 'secret', scopesOfMode('test'))).key;
    const c = await connect(key);
    expect(c.getInstructions()).toContain('TEST MODE');
    expect(await names(c)).toContain('sandbox_reset');
    const name = `Sandbox ${crypto.randomUUID()}`;
    const r = await c.callTool({ name: 'instructors_create', arguments: { name } });
    expect(r.isError).toBeFalsy();
    const where = await s.sql<{ sid: string }[]>`select studio_id as sid from instructors where name = ${name}`;
    expect(where.map((w) => w.sid)).toEqual([sandbox.id]);
    await c.close();
    // a live key never sees sandbox_reset
    expect(await names(await connect(secret))).not.toContain('sandbox_reset');
  });
});

describe('calls', () => {
  test('a create retried with the same arguments creates one record; a new idempotencyKey makes another', async () => {
    const c = await connect(secret);
    const name = `Retried ${crypto.randomUUID()}`;
    const first = await c.callTool({ name: 'instructors_create', arguments: { name, disciplines: ['yoga'] } });
    const again = await c.callTool({ name: 'instructors_create', arguments: { disciplines: ['yoga'], name } });
    expect((again.structuredContent as { id: string }).id).toBe((first.structuredContent as { id: string }).id);
    const count = async () =>
      Number((await s.sql`select count(*)::int as n from instructors where name = ${name}`)[0]!.n);
    expect(await count()).toBe(1);
    await c.callTool({ name: 'instructors_create', arguments: { name, disciplines: ['yoga'], idempotencyKey: 'x1' } });
    expect(await count()).toBe(2);
    await c.close();
  });

  test('a refused write is a tool error with its status and code; arguments refused here are 422 with field errors', async () => {
    const c = await connect(secret);
    const missing = await c.callTool({ name: 'classes_cancel', arguments: { classId: 'cls_0000000000000000000000' } });
    expect(problemOf(missing)).toMatchObject({ status: 404, code: 'not_found' });
    const bad = problemOf(await c.callTool({ name: 'instructors_create', arguments: { name: 5, colour: 'red' } }));
    expect(bad).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(bad.errors!.map((e) => e.path).sort()).toEqual(['/body/name', '/colour']);
    const email = `dup-${crypto.randomUUID()}@example.com`;
    await c.callTool({ name: 'members_invite', arguments: { email } });
    const dup = await c.callTool({ name: 'members_invite', arguments: { email, idempotencyKey: crypto.randomUUID() } });
    expect(problemOf(dup)).toMatchObject({ status: 409, code: 'member_exists' });
    await c.close();
  });

  test('a list returns one page and next_cursor, which fetches the next', async () => {
    const other = (await s.studio({ name: 'Paged' })).id;
    const key = (await s.key(other, 'secret', SCOPES)).key;
    const c = await connect(key);
    for (const n of ['A', 'B', 'C'])
      await c.callTool({ name: 'instructors_create', arguments: { name: `Paged ${n}` } });
    const page1 = (await c.callTool({ name: 'instructors_list', arguments: { limit: 2 } })).structuredContent as {
      data: { id: string }[];
      next_cursor: string | null;
    };
    expect(page1.data).toHaveLength(2);
    expect(page1.next_cursor).toBeString();
    const page2 = (await c.callTool({ name: 'instructors_list', arguments: { cursor: page1.next_cursor } }))
      .structuredContent as typeof page1;
    expect(page2.data.length).toBeGreaterThanOrEqual(1);
    expect(page2.data.map((i) => i.id)).not.toContain(page1.data[0]!.id);
    await c.close();
  });
});

describe('the HTTP transport', () => {
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const post = (headers: Record<string, string>, body = init) =>
    fetch(`${mcp.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });

  test('no key: 401 with WWW-Authenticate Bearer realm="studio-api" and no OAuth metadata', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="studio-api"');
    expect((await fetch(`${mcp.url}/.well-known/oauth-protected-resource`)).status).toBe(404);
    const wrong = await post({ authorization: 'Bearer svc_sk_nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  test('a foreign Origin is 403; an allowed one and none are served', async () => {
    expect((await post({ authorization: `Bearer ${secret}`, origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ authorization: `Bearer ${secret}`, origin: ALLOWED })).status).toBe(200);
    expect((await post({ authorization: `Bearer ${secret}` })).status).toBe(200);
  });

  test('a body over 1 MiB is 413; GET is 405; /healthz and /readyz answer', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { x: 'a'.repeat(1024 * 1024) } });
    expect((await post({ authorization: `Bearer ${secret}` }, big)).status).toBe(413);
    const get = await fetch(`${mcp.url}/mcp`, { headers: { authorization: `Bearer ${secret}` } });
    expect(get.status).toBe(405);
    expect((await fetch(`${mcp.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${mcp.url}/readyz`)).json()).toMatchObject({ status: 'ready' });
  });
});

const activityOf = async (keyId: string) => {
  await s.gateway.activity.flush();
  return s.sql<{ operationId: string; userAgent: string; clientAddress: string }[]>`
    select operation_id, user_agent, client_address from activity where key_id = ${keyId} order by at`;
};

test("the activity log shows the MCP client's calls under the agent's key, name and address", async () => {
  const { key, id } = await s.key(studioId, 'secret', SCOPES, 'claude');
  const c = await connect(key, { name: 'claude-ai', headers: { 'x-forwarded-for': '203.0.113.7' } });
  await c.callTool({ name: 'plans_list', arguments: {} });
  await c.close();
  const all = await activityOf(id);
  // the session's start describes the key (GET /v1/key), then the call: both the agent's, from the agent's address
  expect(all.map((r) => r.operationId)).toEqual(['managementGetKey', 'managementListPlans']);
  for (const r of all) expect(r.clientAddress).toBe('203.0.113.7');
  const rows = all.filter((r) => r.operationId === 'managementListPlans');
  expect(rows[0]!.userAgent).toBe(`studio-sdk-typescript/0.1.0 studio-mcp/${MCP_VERSION} claude-ai/9.9.9`);
  expect(rows[0]!.clientAddress).toBe('203.0.113.7');
});

const stdio = async (key: string, extra: Record<string, string> = {}) => {
  const client = new Client({ name: 'desktop-client', version: '2.0' });
  await client.connect(
    new StdioClientTransport({
      command: 'bun',
      args: [join(import.meta.dir, '../src/stdio.ts')],
      env: {
        PATH: process.env.PATH!,
        STUDIO_API_KEY: key,
        MANAGEMENT_PUBLIC_URL: s.managementUrl,
        STOREFRONT_PUBLIC_URL: s.storefrontUrl,
        ...extra,
      },
      stderr: 'pipe',
    }),
  );
  return client;
};

describe('over stdio', () => {
  test('the bin serves the key from STUDIO_API_KEY, narrowed by MCP_TOOLSETS, naming the client', async () => {
    const { key, id } = await s.key(studioId, 'secret', SCOPES, 'desktop');
    const client = await stdio(key, { MCP_TOOLSETS: 'classes' });
    expect(await names(client)).toEqual([
      'classes_cancel',
      'classes_create',
      'classes_list',
      'classes_retrieve',
      'classes_update',
      'key_retrieve',
    ]);
    const listed = await client.callTool({ name: 'classes_list', arguments: { limit: 1 } });
    expect(listed.isError).toBeFalsy();
    await client.close();
    const rows = (await activityOf(id)).filter((r) => r.operationId === 'managementListClasses');
    expect(rows[0]!.userAgent).toBe(`studio-sdk-typescript/0.1.0 studio-mcp/${MCP_VERSION} desktop-client/2.0`);
  });

  test("a key's scopes decide the list, a publishable key gets the Storefront's, a refused write is a tool error", async () => {
    const reader = await stdio((await s.key(studioId, 'secret', ['classes:read'])).key);
    expect(await names(reader)).toEqual([
      'classes_list',
      'classes_retrieve',
      'events_list',
      'events_retrieve',
      'key_retrieve',
    ]);
    await expect(reader.callTool({ name: 'classes_cancel', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await reader.close();
    const site = await stdio((await s.key(studioId, 'publishable')).key);
    expect(await names(site)).toEqual(
      toolsOf('storefront')
        .map((t) => t.name)
        .sort(),
    );
    await site.close();
    const writer = await stdio(secret);
    const refused = await writer.callTool({
      name: 'classes_cancel',
      arguments: { classId: 'cls_0000000000000000000000' },
    });
    expect(problemOf(refused)).toMatchObject({ status: 404, code: 'not_found' });
    await writer.close();
  });
});
