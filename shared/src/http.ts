/** Small HTTP helpers shared by the gateway and the services. */
import { randomBase62 } from './base62';

export const JSON_TYPE = 'application/json';

/**
 * Unique, not secret: a random prefix per process and a counter (a UUID per request cost
 * more than the rest of a cached answer's bookkeeping). Sorts by time within a process.
 */
const processPrefix = `req_${randomBase62(10)}`;
let counter = 0;
export function newRequestId(): string {
  return `${processPrefix}${(counter++).toString(36).padStart(8, '0')}`;
}

/** Strong ETag of a body (a fast non-cryptographic 64-bit hash is enough to tell versions apart). */
export const etagOf = (body: string | Uint8Array): string => `"${Bun.hash(body).toString(36)}"`;

export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

export function log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}) {
  const line = JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields });
  if (level === 'error' || level === 'warn') console.error(line);
  else if (level === 'info' || process.env.LOG_LEVEL === 'debug') console.log(line);
}
