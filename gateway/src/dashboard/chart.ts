import type { Sql } from '@studio/shared/db';
import { html, type Html } from './html';

/** Calls and errors per hour over the last 24 hours, or per day over the last 30 days. */
export type ChartRange = '24h' | '30d';

interface Bucket {
  at: number;
  calls: number;
  errors: number;
}

const RANGE = { '24h': { unit: 'hour', step: 3_600_000, n: 24 }, '30d': { unit: 'day', step: 86_400_000, n: 30 } } as const;

/** The buckets of a range that ends with the bucket of `now`. */
function bucketsOf(range: ChartRange, now: number) {
  const { unit, step, n } = RANGE[range];
  const end = Math.floor(now / step) * step + step;
  return { unit, step, n, start: end - n * step, end };
}

/**
 * At most 720 rows of activity_hourly (one index range scan): the counts of the range's
 * non-empty buckets. The query itself, so `bun run bench:activity-plan` explains what the page sends.
 */
export function chartQuery(sql: Sql, studioId: string, range: ChartRange, now = Date.now()) {
  const { unit, start, end } = bucketsOf(range, now);
  return sql<{ at: Date; calls: number; errors: number }[]>`
    select date_trunc(${unit}, hour, 'UTC') as at, sum(calls)::int as calls, sum(errors)::int as errors
    from activity_hourly where studio_id = ${studioId} and hour >= ${new Date(start)} and hour < ${new Date(end)}
    group by 1`;
}

/** The counts of every bucket in the range, empty ones included. */
export async function chartBuckets(sql: Sql, studioId: string, range: ChartRange, now = Date.now()): Promise<Bucket[]> {
  const { step, n, start } = bucketsOf(range, now);
  const byTime = new Map((await chartQuery(sql, studioId, range, now)).map((r) => [r.at.getTime(), r]));
  return Array.from({ length: n }, (_, i) => {
    const at = start + i * step;
    const r = byTime.get(at);
    return { at, calls: r?.calls ?? 0, errors: r?.errors ?? 0 };
  });
}

const W = 720;
const H = 160;
const PAD = { left: 36, right: 8, top: 10, bottom: 22 };

/** A server-rendered bar chart (no script): calls in blue, errors in red over them, a title per bar for hover. */
export function chartSvg(buckets: Bucket[], range: ChartRange): Html {
  const max = Math.max(1, ...buckets.map((b) => b.calls));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const slot = innerW / buckets.length;
  const y = (v: number) => PAD.top + innerH - (v / max) * innerH;
  const label = (at: number) => (range === '24h' ? `${new Date(at).toISOString().slice(11, 13)}:00` : new Date(at).toISOString().slice(5, 10));
  const totals = buckets.reduce((t, b) => ({ calls: t.calls + b.calls, errors: t.errors + b.errors }), { calls: 0, errors: 0 });
  const bars = buckets.map((b, i) => {
    const x = PAD.left + i * slot + 1;
    const w = Math.max(1, slot - 2);
    const when = range === '24h' ? `${new Date(b.at).toISOString().slice(0, 13).replace('T', ' ')}:00 UTC` : `${new Date(b.at).toISOString().slice(0, 10)} UTC`;
    return html`<g><title>${when}: ${b.calls} calls, ${b.errors} errors</title>
      <rect x="${x.toFixed(1)}" y="${y(b.calls).toFixed(1)}" width="${w.toFixed(1)}" height="${(PAD.top + innerH - y(b.calls)).toFixed(1)}" fill="#3b82f6"/>
      ${b.errors ? html`<rect x="${x.toFixed(1)}" y="${y(b.errors).toFixed(1)}" width="${w.toFixed(1)}" height="${(PAD.top + innerH - y(b.errors)).toFixed(1)}" fill="#dc2626"/>` : ''}
    </g>`;
  });
  const every = range === '24h' ? 4 : 5;
  const ticks = buckets.map((b, i) => (i % every === 0 ? html`<text x="${(PAD.left + i * slot + slot / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle" font-size="10" fill="#6b7280">${label(b.at)}</text>` : ''));
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title chart-desc">
    <title id="chart-title">Calls and errors ${range === '24h' ? 'per hour, last 24 hours' : 'per day, last 30 days'} (UTC)</title>
    <desc id="chart-desc">${totals.calls} calls, ${totals.errors} errors; busiest ${range === '24h' ? 'hour' : 'day'}: ${max === 1 && !totals.calls ? 0 : max} calls.</desc>
    <line x1="${PAD.left}" y1="${PAD.top + innerH}" x2="${W - PAD.right}" y2="${PAD.top + innerH}" stroke="#9ca3af"/>
    <text x="${PAD.left - 4}" y="${PAD.top + 8}" text-anchor="end" font-size="10" fill="#6b7280">${max}</text>
    <text x="${PAD.left - 4}" y="${PAD.top + innerH}" text-anchor="end" font-size="10" fill="#6b7280">0</text>
    ${bars}${ticks}
  </svg>`;
}
