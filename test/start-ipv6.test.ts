/**
 * `bun run start` with an IPv6 `HOST` (`::1`, loopback): it waits for the processes, and names them, at the address in
 * brackets, as a URL needs it; the stack serves there. Skipped where the machine has no IPv6 loopback.
 */
import { afterAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { randomBase62 } from '@studio/shared';
import postgres from 'postgres';
import { readUntil } from '../scripts/lib/output';
import { stackPorts } from '../scripts/lib/ports';

const root = join(import.meta.dir, '..');
const base = process.env.TEST_DATABASE_URL!;
const dbName = `studio_start_v6_${randomBase62(8).toLowerCase()}`;
function ipv6Loopback(): boolean {
  try {
    Bun.listen({ hostname: '::1', port: 0, socket: { data() {} } }).stop(true);
    return true;
  } catch {
    return false;
  }
}
const ipv6 = ipv6Loopback();

afterAll(async () => {
  const a = postgres(base, { max: 1, onnotice: () => {} });
  await a.unsafe(`drop database if exists ${dbName} with (force)`);
  await a.end();
});

test.if(ipv6)(
  'HOST=::1: the stack comes up, says where, and serves there',
  async () => {
    const { port, env: ports } = await stackPorts();
    const {
      STOREFRONT_SERVICE_URL: _a,
      MANAGEMENT_SERVICE_URL: _b,
      STOREFRONT_PUBLIC_URL: _c,
      MANAGEMENT_PUBLIC_URL: _d,
      DASHBOARD_PUBLIC_URL: _e,
      ...inherited
    } = process.env as Record<string, string>;
    const proc = Bun.spawn(['bun', 'run', 'start'], {
      cwd: root,
      env: {
        ...inherited,
        HOST: '::1',
        DATABASE_URL: Object.assign(new URL(base), { pathname: `/${dbName}` }).href,
        REDIS_URL: 'none',
        ...ports,
      },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    try {
      const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
      const output = await readUntil(reader, /Press Ctrl-C|not ready/, 25_000);
      reader.releaseLock();
      expect(output).toContain(`Storefront  http://[::1]:${port.storefront}/v1`);
      expect(output).toContain(`Operations  http://[::1]:${port.ops}/metrics`);
      expect((await fetch(`http://[::1]:${port.management}/readyz`)).status).toBe(200);
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  },
  40_000,
);
