/**
 * One turn of the event loop answers requests for LONG_TURN_MS at most (gateway/src/pipeline/index.ts): a request
 * that comes later in the turn is answered on the next turn, with the same answer, so a pipelined flood cannot hold
 * the loop (its timers, its other ports, the activity log's flushes) for seconds. The surface's own handler, called
 * as Bun.serve calls it, in the stack's gateway.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Stack, startStack } from '../../test/harness';
import { LONG_TURN_MS } from '../src/pipeline';

let s: Stack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(() => s.close());

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test('requests past LONG_TURN_MS of one turn are answered on the next turn, unchanged; the next turn answers at once', async () => {
  const fetch = s.gateway.storefront;
  const server = { requestIP: () => ({ address: '127.0.0.1' }) };
  // no key: 401 at once, from memory (nothing waits on I/O)
  const call = () => fetch(new Request(`${s.storefrontUrl}/v1/plans`), server);
  await nextTurn();
  const t0 = performance.now();
  const answers: ReturnType<typeof call>[] = [];
  while (performance.now() - t0 < LONG_TURN_MS + 20) answers.push(call());
  const deferred = answers.findIndex((a) => a instanceof Promise);
  expect(answers[0]).toBeInstanceOf(Response);
  expect(deferred).toBeGreaterThan(0);
  // from the first one deferred on, every later one of the turn is
  expect(answers.slice(deferred).every((a) => a instanceof Promise)).toBe(true);
  const late = await answers.at(-1)!;
  expect(late.status).toBe(401);
  expect(late.headers.get('content-type')).toStartWith('application/problem+json');
  await nextTurn();
  expect(call()).toBeInstanceOf(Response);
});
