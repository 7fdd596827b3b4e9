/**
 * When a failed webhook attempt is tried again (docs/design/webhooks.md): WEBHOOK_RETRY_SCHEDULE lists the
 * delays after the first attempt, the second, and so on (default `5s,5m,30m,2h,5h,10h,10h`: eight
 * attempts over about 28 hours); each delay gets ±10 % jitter so that the retries of a burst that
 * failed together (a receiver that was down) do not all come back in the same second.
 */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `5s,5m,100ms` as milliseconds; the config's pattern has already checked the shape. */
export function parseRetrySchedule(text: string): number[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)(ms|s|m|h|d)\s*$/.exec(part);
    if (!m) throw new Error(`not a delay: ${part} (use e.g. 500ms, 5s, 5m, 2h, 1d)`);
    return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  });
}

/**
 * The delay before the next attempt after `attemptsMade` attempts of this round failed, or null
 * when the schedule is spent (the delivery has failed).
 */
export function retryDelay(
  schedule: readonly number[],
  attemptsMade: number,
  random: () => number = Math.random,
): number | null {
  const base = schedule[attemptsMade - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + 0.2 * random()));
}

/** An endpoint failing every attempt for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 3 * 86_400_000;
