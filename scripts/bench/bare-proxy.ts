#!/usr/bin/env bun
/**
 * The floor of a Bun proxy, for the `hop` case (`bun run bench hop`): Bun.serve in front of one upstream over
 * the gateway's own HTTP/1.1 keep-alive pool (gateway/src/forward/http1.ts), adding fixed
 * request headers (the signed ones, as nginx is given them) and nothing else: no key, limit,
 * signature, trace, activity or metrics. What the gateway costs beyond this is its pipeline;
 * what this costs beyond nginx is the runtime's (Bun.serve, Bun.connect, Response).
 *
 * Run as its own process: `bun scripts/bench/bare-proxy.ts <port> <upstream> <headers JSON>`.
 */
import { Pool } from '@studio/gateway/tooling';
import { requestTarget } from '@studio/shared';
import { SERVE_DEFAULTS } from '@studio/shared/io';

const [port, upstream, headersJson] = process.argv.slice(2) as [string, string, string];
const pool = new Pool(upstream);
let head = '';
for (const [k, v] of Object.entries(JSON.parse(headersJson) as Record<string, string>)) head += `${k}: ${v}\r\n`;

Bun.serve({
  ...SERVE_DEFAULTS,
  hostname: '127.0.0.1',
  port: Number(port),
  async fetch(req) {
    const answer = await pool.request(req.method, requestTarget(req.url).pathAndQuery, head, null, 10_000);
    return new Response(answer.body.byteLength ? (answer.body as Uint8Array<ArrayBuffer>) : null, {
      status: answer.status,
      headers: answer.headers,
    });
  },
});

// a clean exit on SIGTERM, so a CPU profile (`--cpu-prof-md`) is written
process.on('SIGTERM', () => process.exit(0));
