import { median } from './stats';

export type Call = () => Promise<unknown>;

/**
 * `concurrency` workers for `seconds`, each alternating a call of `a` and a call of `b`, so both meet the same moments
 * of a shared machine (the `sdk` and `mcp` cases): the median time of each, in ms.
 */
export async function alternate(
  a: Call,
  b: Call,
  seconds: number,
  concurrency: number,
): Promise<{ a: number; b: number }> {
  const until = performance.now() + seconds * 1000;
  const times = { a: [] as number[], b: [] as number[] };
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = worker; performance.now() < until; i++) {
        const which = i % 2 === 0 ? 'a' : 'b';
        const t = performance.now();
        await (which === 'a' ? a() : b());
        times[which].push(performance.now() - t);
      }
    }),
  );
  return { a: median(times.a), b: median(times.b) };
}
