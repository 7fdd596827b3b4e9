import type { LimitResult, RateLimiter } from '../forward/ratelimit';
import type { KeyResolver } from '../keys/resolver';
import { keyDetail } from './authorize';
import { clientAddressOf, refuse, type Ctx } from './context';
import type { SurfaceProfile } from './profile';

/** Counts each decision (`studio_rate_limit_decisions_total`). */
export type LimitDecisionCount = (labels: { decision: 'allowed' | 'limited' | 'revoked' | 'fail_open' }) => void;

/**
 * Step 5: the key's rate limit (a publishable key's per visitor address too). The
 * answer comes from the local lease when it can (synchronously), else from Redis.
 * Redis can also tell that the key was revoked on another replica. A limiter that
 * cannot decide (Redis down) admits, and says so in its log: `decide` gets null.
 */
export function limitStep(p: SurfaceProfile, limiter: RateLimiter, keys: KeyResolver, trusted: ReadonlySet<string>, count: LimitDecisionCount = () => {}) {

  function decide(c: Ctx, l: LimitResult | null): Response | null {
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
    if (!l.allowed) return refuse(p, c, 'rate_limited', { detail: 'Too many requests; slow down.', headers: { 'retry-after': String(l.retryAfter) } });
    return null;
  }

  return function limit(c: Ctx): Response | null | Promise<Response | null> {
    const k = c.key!;
    const group = limiter.groupFor(k.id, k.kind, k.kind === 'publishable' ? clientAddressOf(c, trusted) : '');
    const known = limiter.peek(group, c.hash!);
    if (known !== undefined) return decide(c, known);
    return limiter.check(c.hash!, group).then((l) => decide(c, l));
  };
}
