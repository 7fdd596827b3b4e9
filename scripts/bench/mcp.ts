/**
 * The `mcp` case (`bun run bench mcp`): what the MCP server adds to a call (docs/design/mcp.md). The same uncached
 * Management read (`GET /v1/instructors`, 20 rows) made as an MCP tool call (`instructors_list`, by the MCP project's
 * own client over Streamable HTTP to the MCP server's process, which makes it through the SDK) and as the SDK's own
 * `studio.instructors.list()`, in turns within one run (each worker alternating the two call by call), from this
 * process on the load core while the stack, the MCP server included, runs on the server core. Figure: the median
 * tool call's time over the median SDK call's, in ms (median of rounds).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Studio } from '@studio/sdk';
import { alternate, type Call } from './alternate';
import { seedInstructors } from './instructors';
import { caseFlags, caseOptions, report } from './report';
import { createBenchStack } from './stack';
import { median } from './stats';

const { SECONDS, ROUNDS, SERVER_CPU, LOAD_CPU } = caseOptions({ seconds: 3, rounds: 6 });
/** Calls in flight at once: an agent's handful. */
const CONCURRENCY = 4;

Bun.spawnSync(['taskset', '-cp', LOAD_CPU, String(process.pid)], { stdout: 'ignore', stderr: 'ignore' });

interface Round {
  mcpMs: number;
  sdkMs: number;
}

const stack = await createBenchStack(SERVER_CPU);
const problems: string[] = [];
const clients: Client[] = [];
try {
  const { secret } = await seedInstructors(stack.config.DATABASE_URL, 'Bench mcp');
  await stack.start(['management-service', 'gateway', 'mcp']);
  const studio = new Studio({ apiKey: secret.key as `svc_sk_${string}`, baseUrl: stack.config.MANAGEMENT_PUBLIC_URL });
  // one client per worker, as agents each hold their own; each connects (initialize) once
  for (let i = 0; i < CONCURRENCY; i++) {
    const client = new Client({ name: 'bench-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${stack.env.MCP_PORT}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${secret.key}` } },
      }),
    );
    clients.push(client);
  }
  let next = 0;
  const tool: Call = async () => {
    const result = await clients[next++ % CONCURRENCY]!.callTool({ name: 'instructors_list', arguments: {} });
    const data = (result.structuredContent as { data?: unknown[] } | undefined)?.data;
    if (result.isError || data?.length !== 20) throw new Error(`mcp: ${JSON.stringify(result).slice(0, 300)}`);
    return result;
  };
  const sdk: Call = async () => {
    const page = await studio.instructors.list();
    if (page.data.length !== 20) throw new Error(`sdk: ${page.data.length} instructors`);
    return page;
  };
  await alternate(tool, sdk, 1, CONCURRENCY); // warm-up: connections, JIT, the key caches
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const { a, b } = await alternate(tool, sdk, SECONDS, CONCURRENCY);
    rounds.push({ mcpMs: a, sdkMs: b });
    console.log(
      `round ${r + 1}: sdk ${b.toFixed(3)} ms, mcp ${a.toFixed(3)} ms (medians), over ${(a - b).toFixed(3)} ms`,
    );
  }
  const of = (f: (x: Round) => number) => median(rounds.map(f));
  report(
    {
      over: +of((x) => x.mcpMs - x.sdkMs).toFixed(3),
      'sdk ms/call': +of((x) => x.sdkMs).toFixed(3),
      'mcp ms/call': +of((x) => x.mcpMs).toFixed(3),
    },
    problems,
  );
  if (caseFlags.quick) console.log('(--quick: one short round, no verdict)');
} catch (err) {
  problems.push(String(err));
  report({}, problems);
} finally {
  await Promise.allSettled(clients.map((c) => c.close()));
  await stack.stop();
}
