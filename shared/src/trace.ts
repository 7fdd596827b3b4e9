/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): a valid incoming
 * `traceparent` is continued, anything else starts a new trace. Ids are slices of a
 * pool of random bytes, refilled 4 KiB at a time and turned into hex once: a
 * getRandomValues call per request cost more than the rest of the bookkeeping, and a
 * hex conversion per id (with the request id's padding) 4 % of a cached read's CPU
 * (docs/benchmarks.md).
 */
import { randomFillSync } from 'node:crypto';
import type { Span } from '@opentelemetry/api';

export interface Trace {
  traceId: string;
  /** This hop's span. */
  spanId: string;
  /** The caller's span, when the trace was continued. */
  parentId: string | null;
  /** `01` sampled, `00` not. */
  flags: string;
  /** When the span started, ms since the epoch. */
  start: number;
  /** `traceparentOf`, once built. */
  header?: string;
  /** The SDK's span of this hop, when tracing exports (`shared/src/io/tracing.ts`); never made otherwise. */
  span?: Span;
}

/** How a process starts a request's trace: `startTrace`, or the SDK's (`Tracing#start`) when spans are exported. */
export type TraceStarter = (traceparent: string | null, start?: number) => Trace;

const HEX = /^[0-9a-f]+$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The trace id, parent span id and flags of a valid `traceparent`, or null. */
export function parseTraceparent(header: string | null): { traceId: string; parentId: string; flags: string } | null {
  if (!header || header.length < 55) return null;
  const version = header.slice(0, 2);
  // version 00 is exactly 55 characters; a later version may append fields after a dash
  if (
    version === 'ff' ||
    !HEX.test(version) ||
    (version === '00' ? header.length !== 55 : header.length > 55 && header[55] !== '-')
  )
    return null;
  if (header[2] !== '-' || header[35] !== '-' || header[52] !== '-') return null;
  const traceId = header.slice(3, 35);
  const parentId = header.slice(36, 52);
  const flags = header.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(parentId) || !HEX.test(flags)) return null;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return null;
  return { traceId, parentId, flags };
}

const pool = Buffer.allocUnsafe(4096);
/** The pool as hex: ids are slices of it, with no call into the runtime per id. */
let hex = '';
let used = 0;
function randomHex(bytes: number): string {
  const chars = bytes * 2;
  if (used + chars > hex.length) {
    randomFillSync(pool);
    hex = pool.toString('hex');
    used = 0;
  }
  used += chars;
  return hex.slice(used - chars, used);
}

/** A span for this hop, starting `start` (ms): the incoming trace continued, or a new one (sampled). */
export function startTrace(traceparent: string | null, start = Date.now()): Trace {
  const incoming = parseTraceparent(traceparent);
  if (incoming) {
    const { traceId, parentId, flags } = incoming;
    return { traceId, spanId: randomHex(8), parentId, flags, start };
  }
  return { traceId: randomHex(16), spanId: randomHex(8), parentId: null, flags: '01', start };
}

/** `traceparent` for the next hop (this span as its parent), and `traceresponse` for the answer: the same shape (built once). */
export const traceparentOf = (t: Trace): string => (t.header ??= `00-${t.traceId}-${t.spanId}-${t.flags}`);
export const TRACEPARENT = 'traceparent';
export const TRACERESPONSE = 'traceresponse';
