/**
 * A test sends only to loopback or its own network namespaces (the developers' guide): test/preload.ts refuses a fetch
 * of the test process to any other host before it connects. This checks the guard is in place for every file.
 */
import { expect, test } from 'bun:test';

test('a fetch to a public address, or one reserved for documentation, is refused before it connects; loopback is not', async () => {
  await expect(fetch('https://93.184.215.14/hooks')).rejects.toThrow(/sends only to loopback/);
  await expect(fetch('http://203.0.113.7:8443/x')).rejects.toThrow(/sends only to loopback/);
  await expect(fetch('https://hooks.example.com/x')).rejects.toThrow(/sends only to loopback/);
  const local = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('here') });
  try {
    expect(await (await fetch(`http://127.0.0.1:${local.port}/`)).text()).toBe('here');
    expect(await (await fetch(`http://localhost:${local.port}/`)).text()).toBe('here');
  } finally {
    local.stop(true);
  }
});
