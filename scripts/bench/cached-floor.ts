#!/usr/bin/env bun
/**
 * The floor of a cached read, for `bun run bench`: Bun.serve answering every request with the
 * gateway's own answer to the bench's read (its compressed body and its headers, as they came
 * over the wire), from memory, and nothing else: no key, limit, request id, trace, activity,
 * access line or metrics. What the gateway's cached read costs beyond this is its pipeline;
 * what this costs beyond nginx -> Elysia is the runtime's.
 *
 * Run as its own process: `bun scripts/bench/cached-floor.ts <port> <body file> <headers JSON>`.
 */
import { SERVE_DEFAULTS } from '@studio/shared/io';

const [port, bodyFile, headersJson] = process.argv.slice(2) as [string, string, string];
const body = new Blob([await Bun.file(bodyFile).arrayBuffer()]);
// built once, as the gateway builds each cached representation's headers once
const headers = new Headers(JSON.parse(headersJson) as Record<string, string>);

Bun.serve({
  ...SERVE_DEFAULTS,
  hostname: '127.0.0.1',
  port: Number(port),
  fetch: () => new Response(body, { status: 200, headers }),
});

// a clean exit on SIGTERM
process.on('SIGTERM', () => process.exit(0));
