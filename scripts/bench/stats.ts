/** The benches' order statistics, over a copy of the values (the caller's order is kept). */

/** The value at `q` (0-1) of the values sorted ascending: the one at floor(q × n), the last for q = 1; NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** The median as every bench reports it: the upper middle value of an even count. */
export const median = (xs: readonly number[]): number => quantile(xs, 0.5);
