/** Small HTTP helpers shared by the gateway and the services. */
export const JSON_TYPE = 'application/json';

export function newRequestId(): string {
  return `req_${Bun.randomUUIDv7('base64url')}`;
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
