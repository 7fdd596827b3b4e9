/**
 * When `bun run start` starts again a process that died (a child, or the embedded Postgres), as a container restart
 * policy would: after 0.5 s, doubling to 30 s, the count of failures reset once it has stayed up a minute.
 * `failures` is how many came before this one; the answer's `streak` is what the next restart passes on.
 */
export function restartAfter(startedAt: number, failures: number): { streak: number; delayMs: number } {
  const streak = Date.now() - startedAt > 60_000 ? 0 : failures;
  return { streak, delayMs: Math.min(30_000, 500 * 2 ** streak) };
}
