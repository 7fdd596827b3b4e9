import type { HeldAnswer } from '../answer';
import type { KeyResolver } from '../keys/resolver';
import type { LimitResult, RateLimiter } from '../limits/rate-limiter';
import { type Ctx, clientAddressOf, keyDetail, refuse } from './context';
import type { SurfaceProfile } from './profile';

/** Counts each decision (`studio_rate_limit_decisions_total`). */
export type LimitDecisionCount = (labels: { decision: 'allowed' | 'limited' | 'revoked' | 'fail_open' }) => void;

/**
 * Step 5: the key's rate limit (a publishable key's per visitor address too). The
 * answer comes from the local lease when it can (synchronously), else from Redis.
 * Redis can also tell that the key was revoked on another replica. A limiter that
 * cannot decide (Redis down) admits, and says so in its log: `decide` gets null.
 */
export function limitStep(
  p: SurfaceProfile,
  limiter: RateLimiter,
  keys: KeyResolver,
  trusted: ReadonlySet<string>,
  count: LimitDecisionCount = () => {},
) {
  function decide(c: Ctx, l: LimitResult | null): HeldAnswer | null {
    if (!l) {
      count({ decision: 'fail_open' });
      return null;
    }
    if (l.revoked) {
      count({ decision: 'revoked' });
      keys.evict(c.hash!);
      return refuse(p, c, 'api_key_revoked', { detail: keyDetail('api_key_revoked', p) });
    }
    c.limitHeaders = l.headers;
    count({ decision: l.allowed ? 'allowed' : 'limited' });
    if (!l.allowed)
      return refuse(p, c, 'rate_limited', {
        detail: 'Too many requests; slow down.',
        headers: { 'retry-after': String(l.retryAfter) },
      });
    return null;
  }

  /**
   * Admitted and refused calls alike (docs/design/hostile-callers.md): a call refused with a known key (401 wrong
   * kind, revoked or expired; 403; 404; 405) spends a token too, and over the limit is a 429
   * (one activity entry per key, address and second) instead of its own refusal.
   */
  function limit(c: Ctx): HeldAnswer | null | Promise<HeldAnswer | null> {
    const k = c.key!;
    const group = limiter.groupFor(k.id, k.kind, k.kind === 'publishable' ? clientAddressOf(c, trusted) : '', k.mode);
    const known = limiter.peek(group, c.hash!, k.revoked);
    if (known !== undefined) return decide(c, known);
    return limiter.check(c.hash!, group, k.revoked).then((l) => decide(c, l));
  }

  /** The caller's address is over its limit of unknown keys (`keyStep`): 429, nothing looked up. */
  function unknownKeys(c: Ctx, l: LimitResult): HeldAnswer {
    count({ decision: 'limited' });
    c.limitHeaders = l.headers;
    return refuse(p, c, 'rate_limited', {
      detail: 'Too many unknown keys from this address; slow down.',
      headers: { 'retry-after': String(l.retryAfter) },
    });
  }

  return Object.assign(limit, { unknownKeys });
}
