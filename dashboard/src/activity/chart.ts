import type { Sql } from '@studio/shared/io';
import { type Html, html } from '../html';
import { hourlyCounts } from './queries';

/** Calls and errors per hour over the last 24 hours, or per day over the last 30 days. */
export type ChartRange = '24h' | '30d';

interface Bucket {
  at: number;
  calls: number;
  errors: number;
}

const RANGE = {
  '24h': { unit: 'hour', step: 3_600_000, n: 24 },
  '30d': { unit: 'day', step: 86_400_000, n: 30 },
} as const;

/** The buckets of a range that ends with the bucket of `now`. */
function bucketsOf(range: ChartRange, now: number) {
  const { unit, step, n } = RANGE[range];
  const end = Math.floor(now / step) * step + step;
  return { unit, step, n, start: end - n * step, end };
}

/**
 * At most 720 rows of activity_hourly (one index range scan): the counts of the range's
 * non-empty buckets. The query itself, so `bun run bench activity-plan` explains what the page sends.
 */
export function chartQuery(sql: Sql, studioId: string, range: ChartRange, now = Date.now()) {
  const { unit, start, end } = bucketsOf(range, now);
  return hourlyCounts(sql, studioId, unit, new Date(start), new Date(end));
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
const H = 140;
const TOP = 6;

/**
 * A server-rendered bar chart (no script): calls in blue, errors in red over them, a title
 * per bar for hover. The bars are an SVG stretched to the card's width; the axis labels are
 * HTML text beside and under it, so they keep the page's font size on a phone (text inside a
 * scaled SVG shrank to 6 px at 390 px wide). The stylesheet lays the labels out (the CSP
 * allows no inline style): six to a row, each under the bucket it names.
 */
export function chartSvg(buckets: Bucket[], range: ChartRange): Html {
  const max = Math.max(1, ...buckets.map((b) => b.calls));
  const slot = W / buckets.length;
  const y = (v: number) => TOP + (H - TOP) - (v / max) * (H - TOP);
  const label = (at: number) =>
    range === '24h' ? `${new Date(at).toISOString().slice(11, 13)}:00` : new Date(at).toISOString().slice(5, 10);
  const totals = buckets.reduce((t, b) => ({ calls: t.calls + b.calls, errors: t.errors + b.errors }), {
    calls: 0,
    errors: 0,
  });
  const bars = buckets.map((b, i) => {
    const x = i * slot + 1;
    const w = Math.max(1, slot - 2);
    const when =
      range === '24h'
        ? `${new Date(b.at).toISOString().slice(0, 13).replace('T', ' ')}:00 UTC`
        : `${new Date(b.at).toISOString().slice(0, 10)} UTC`;
    return html`<g><title>${when}: ${b.calls} calls, ${b.errors} errors</title>
      <rect x="${x.toFixed(1)}" y="${y(b.calls).toFixed(1)}" width="${w.toFixed(1)}" height="${(H - y(b.calls)).toFixed(1)}" fill="#3b82f6"/>
      ${b.errors ? html`<rect x="${x.toFixed(1)}" y="${y(b.errors).toFixed(1)}" width="${w.toFixed(1)}" height="${(H - y(b.errors)).toFixed(1)}" fill="#dc2626"/>` : ''}
    </g>`;
  });
  // one label per six buckets of the 24 hours (every 4th) or of the 30 days (every 5th)
  const every = buckets.length / 6;
  const ticks = buckets.filter((_, i) => i % every === 0).map((b) => html`<span>${label(b.at)}</span>`);
  return html`<div class="chart-frame">
    <div class="chart-y" aria-hidden="true"><span>${max}</span><span>0</span></div>
    <svg class="chart" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-labelledby="chart-title chart-desc">
      <title id="chart-title">Calls and errors ${range === '24h' ? 'per hour, last 24 hours' : 'per day, last 30 days'} (UTC)</title>
      <desc id="chart-desc">${totals.calls} calls, ${totals.errors} errors; busiest ${range === '24h' ? 'hour' : 'day'}: ${max === 1 && !totals.calls ? 0 : max} calls.</desc>
      ${bars}
      <line x1="0" y1="${H - 0.5}" x2="${W}" y2="${H - 0.5}" stroke="#9ca3af" vector-effect="non-scaling-stroke"/>
    </svg>
    <div class="chart-x" aria-hidden="true">${ticks}</div>
  </div>`;
}
