#!/usr/bin/env bun
/**
 * One Bun.serve for `bun run bench:runtime`: a small JSON answer from memory, with its headers on a
 * reused `Headers` (as the gateway's cache keeps them), plus one runtime call the gateway makes on every
 * request, named by `call` (`none`: only the answer). Run as its own process:
 * `bun scripts/bench/runtime-server.ts <port> <call>`.
 */
import { SERVE_DEFAULTS } from '@studio/shared/io/serve';
import { CALLS, type RuntimeCall } from './runtime-calls';

const [port, call] = process.argv.slice(2) as [string, RuntimeCall];
if (!CALLS.includes(call)) throw new Error(`call: one of ${CALLS.join(', ')}`);

const body = new Blob([JSON.stringify({ data: Array.from({ length: 20 }, (_, i) => ({ id: `cls_${i}` })) })]);
const headers = new Headers({ 'content-type': 'application/json', 'x-content-type-options': 'nosniff' });
const hmac = new Bun.CryptoHasher('sha256', 'bench-runtime-secret');
let n = 0;
/** What the call produced, kept so the compiler cannot drop it. */
let sink = 0;

Bun.serve({
  ...SERVE_DEFAULTS,
  hostname: '127.0.0.1',
  port: Number(port),
  fetch(req, server) {
    n++;
    switch (call) {
      case 'url':
        sink += req.url.length;
        break;
      case 'headers':
        sink += req.headers.get('authorization')?.length ?? 0;
        break;
      case 'requestIP':
        sink += server.requestIP(req)?.address.length ?? 0;
        break;
      case 'headers.set':
        headers.set('x-request-id', `req_0mwwbekryStHSiIVU1${n}`);
        headers.set('traceresponse', `00-ec14fcecbbe6e1570c9eff582bb22dc2-1de5f90b327e${n % 10}e7d-01`);
        headers.set('ratelimit', `"key";r=${n % 1000};t=1`);
        break;
      case 'hmac':
        sink += hmac
          .copy()
          .update(`${n}\nGET\n/v1/instructors\nstu_1\nkey_1\nscopes\nop\nreq_${n}\n\n`)
          .digest('hex').length;
        break;
    }
    return new Response(body, { status: 200, headers });
  },
});

process.on('SIGTERM', () => process.exit(sink < 0 ? 1 : 0));
